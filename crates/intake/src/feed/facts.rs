//! Structured job facts found in feed items: Upwork's labeled description lines (see
//! [`super::upwork`]) and job-board namespace elements such as LaraJobs' `job:location`.

use serde::{Deserialize, Serialize};

/// What a feed item says about the job beyond its text.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct FeedJobFacts {
    /// The budget or hourly range (Upwork).
    pub budget: Option<Budget>,
    /// The job's category as the feed names it (`Full Stack Development`).
    pub category: Option<String>,
    /// Skills or tags, in feed order.
    pub skills: Vec<String>,
    /// The client's country (Upwork `Country`).
    pub country: Option<String>,
    /// Where the job is (LaraJobs `job:location`).
    pub location: Option<String>,
    /// The hiring company (LaraJobs `job:company`).
    pub company: Option<String>,
    /// Employment type as the feed writes it (`FULL_TIME`).
    pub job_type: Option<String>,
    /// A salary as free text (LaraJobs `job:salary`).
    pub salary: Option<String>,
}

/// A budget: a fixed price or an hourly range.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Budget {
    /// The lower bound (equal to `max` for a single amount).
    pub min: f64,
    /// The upper bound.
    pub max: f64,
    /// ISO 4217 code when the symbol is known (`USD` for `$`), else the symbol as written.
    pub currency: String,
    /// Fixed price or hourly.
    pub kind: BudgetKind,
}

/// How a [`Budget`] is paid.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum BudgetKind {
    /// One price for the whole job.
    Fixed,
    /// Per hour.
    Hourly,
}

impl FeedJobFacts {
    /// Whether no fact is known.
    pub fn is_empty(&self) -> bool {
        *self == Self::default()
    }

    /// Fills the facts `self` lacks from `other` (`self` wins where both know a fact).
    pub fn merge(&mut self, other: FeedJobFacts) {
        fn fill<T>(slot: &mut Option<T>, value: Option<T>) {
            if slot.is_none() {
                *slot = value;
            }
        }
        fill(&mut self.budget, other.budget);
        fill(&mut self.category, other.category);
        fill(&mut self.country, other.country);
        fill(&mut self.location, other.location);
        fill(&mut self.company, other.company);
        fill(&mut self.job_type, other.job_type);
        fill(&mut self.salary, other.salary);
        if self.skills.is_empty() {
            self.skills = other.skills;
        }
    }

    /// One compact line with every known fact, appended to the post text so the classifier
    /// and subscribers see them: `Budget: $10,000 fixed | Category: … | Skills: a, b | …`.
    /// `None` when no fact is known.
    pub fn summary_line(&self) -> Option<String> {
        let budget = self.budget.as_ref().map(Budget::display);
        let labeled = [
            ("Budget", budget.as_ref()),
            ("Salary", self.salary.as_ref()),
            ("Category", self.category.as_ref()),
            ("Type", self.job_type.as_ref()),
            ("Company", self.company.as_ref()),
            ("Location", self.location.as_ref()),
            ("Country", self.country.as_ref()),
        ];
        let mut parts: Vec<String> = labeled
            .into_iter()
            .filter_map(|(label, value)| Some(format!("{label}: {}", value?)))
            .collect();
        if !self.skills.is_empty() {
            parts.push(format!("Skills: {}", self.skills.join(", ")));
        }
        (!parts.is_empty()).then(|| parts.join(" | "))
    }

    /// Facts from job-board namespace elements of one item, given as `(local name, text)`
    /// pairs (`("location", "Munich, Germany")` from `<job:location>`). Blank values are
    /// ignored; `tags`/`skills` are split at commas. `None` when nothing was recognised.
    pub fn from_extensions(extensions: &[(String, String)]) -> Option<FeedJobFacts> {
        let mut facts = FeedJobFacts::default();
        for (name, value) in extensions {
            let value = value.split_whitespace().collect::<Vec<_>>().join(" ");
            if value.is_empty() {
                continue;
            }
            match name.to_ascii_lowercase().as_str() {
                "location" => facts.location = Some(value),
                "company" | "company_name" => facts.company = Some(value),
                "job_type" | "jobtype" | "type" | "employment_type" => {
                    facts.job_type = Some(value);
                }
                "salary" => facts.salary = Some(value),
                "country" => facts.country = Some(value),
                "category" => facts.category = Some(value),
                "tags" | "skills" => facts.skills = split_list(&value),
                _ => {}
            }
        }
        (!facts.is_empty()).then_some(facts)
    }
}

impl Budget {
    /// The budget as a person would write it: `$10,000 fixed`, `$15.00–$35.00/hr`.
    pub fn display(&self) -> String {
        let symbol = match self.currency.as_str() {
            "USD" => "$".to_owned(),
            "EUR" => "€".to_owned(),
            "GBP" => "£".to_owned(),
            other => format!("{other} "),
        };
        let amount = |v: f64| format!("{symbol}{}", format_amount(v, self.kind));
        let range = if (self.max - self.min).abs() < f64::EPSILON {
            amount(self.min)
        } else {
            format!("{}–{}", amount(self.min), amount(self.max))
        };
        match self.kind {
            BudgetKind::Fixed => format!("{range} fixed"),
            BudgetKind::Hourly => format!("{range}/hr"),
        }
    }
}

/// `10000` → `10,000`; hourly amounts keep cents (`15.00`), as Upwork writes them.
fn format_amount(value: f64, kind: BudgetKind) -> String {
    if kind == BudgetKind::Fixed && value.fract() == 0.0 {
        let digits = format!("{value:.0}");
        let mut out = String::new();
        for (i, c) in digits.chars().enumerate() {
            if i > 0 && (digits.len() - i) % 3 == 0 {
                out.push(',');
            }
            out.push(c);
        }
        out
    } else {
        format!("{value:.2}")
    }
}

/// Splits a comma-separated list, trimming items and dropping empty ones.
pub(crate) fn split_list(value: &str) -> Vec<String> {
    value
        .split(',')
        .map(|s| s.split_whitespace().collect::<Vec<_>>().join(" "))
        .filter(|s| !s.is_empty())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ext(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    }

    #[test]
    fn larajobs_extensions_become_facts_and_blank_ones_are_ignored() {
        let facts = FeedJobFacts::from_extensions(&ext(&[
            ("location", " Munich, Germany "),
            ("job_type", " FULL_TIME "),
            ("salary", " "),
            ("company", " FC Bayern München AG "),
            ("company_logo", "https://larajobs.com/logos/x.webp"),
            ("tags", " Angular,Fullstack,Laravel,SQL,VueJS "),
        ]))
        .expect("facts");
        assert_eq!(facts.location.as_deref(), Some("Munich, Germany"));
        assert_eq!(facts.job_type.as_deref(), Some("FULL_TIME"));
        assert_eq!(facts.salary, None);
        assert_eq!(facts.company.as_deref(), Some("FC Bayern München AG"));
        assert_eq!(
            facts.skills,
            ["Angular", "Fullstack", "Laravel", "SQL", "VueJS"]
        );
        assert_eq!(
            facts.summary_line().as_deref(),
            Some(
                "Type: FULL_TIME | Company: FC Bayern München AG | Location: Munich, Germany | \
                 Skills: Angular, Fullstack, Laravel, SQL, VueJS"
            )
        );
        assert_eq!(FeedJobFacts::from_extensions(&ext(&[("tags", " ")])), None);
    }

    #[test]
    fn budgets_display_like_people_write_them() {
        use BudgetKind::{Fixed, Hourly};
        for (min, max, currency, kind, shown) in [
            (10_000.0, 10_000.0, "USD", Fixed, "$10,000 fixed"),
            (15.0, 35.0, "USD", Hourly, "$15.00–$35.00/hr"),
            (1.25e6, 1.25e6, "EUR", Fixed, "€1,250,000 fixed"),
        ] {
            let budget = Budget {
                min,
                max,
                currency: currency.into(),
                kind,
            };
            assert_eq!(budget.display(), shown);
        }
    }

    #[test]
    fn merge_keeps_own_facts_and_fills_gaps() {
        let mut a = FeedJobFacts {
            category: Some("A".into()),
            ..FeedJobFacts::default()
        };
        a.merge(FeedJobFacts {
            category: Some("B".into()),
            country: Some("X".into()),
            skills: vec!["s".into()],
            ..FeedJobFacts::default()
        });
        assert_eq!(a.category.as_deref(), Some("A"));
        assert_eq!(a.country.as_deref(), Some("X"));
        assert_eq!(a.skills, ["s"]);
        assert!(FeedJobFacts::default().summary_line().is_none());
    }
}
