//! Upwork-style job feeds: the facts Upwork writes into each item's HTML description as
//! labeled lines, `<b>Budget</b>: $500`, `<b>Hourly Range</b>: $15.00-$35.00`,
//! `<b>Category</b>: …`, `<b>Skills</b>:a,     b`, `<b>Country</b>: …`.

use jobwire_core::amount::price;

use super::facts::{Budget, BudgetKind, FeedJobFacts, split_list};
use super::text::html_to_text;

/// The facts of an Upwork item description, or `None` if it has none of the labeled lines
/// (`Budget`, `Hourly Range`, `Category`, `Skills`, `Country`).
pub fn extract(description_html: &str) -> Option<FeedJobFacts> {
    let lower = description_html.to_ascii_lowercase();
    let field = |label: &str| labeled_value(description_html, &lower, label);
    let budget = field("budget")
        .and_then(|v| parse_budget(&v, BudgetKind::Fixed))
        .or_else(|| field("hourly range").and_then(|v| parse_budget(&v, BudgetKind::Hourly)));
    let facts = FeedJobFacts {
        budget,
        category: field("category"),
        skills: field("skills").map(|v| split_list(&v)).unwrap_or_default(),
        country: field("country"),
        ..FeedJobFacts::default()
    };
    (!facts.is_empty()).then_some(facts)
}

/// Upwork titles end in ` - Upwork`; this returns the title without it.
pub fn clean_title(title: &str) -> &str {
    title.strip_suffix(" - Upwork").unwrap_or(title).trim()
}

/// The text after `<b>Label</b>:` up to the next tag, entities decoded and whitespace
/// collapsed; `None` when the label is missing or its value blank. `lower` is
/// `html.to_ascii_lowercase()` (same byte offsets).
fn labeled_value(html: &str, lower: &str, label: &str) -> Option<String> {
    let marker = format!("<b>{label}</b>");
    let mut from = 0;
    while let Some(at) = lower[from..].find(&marker) {
        let after = from + at + marker.len();
        let rest = html[after..].trim_start();
        if let Some(value) = rest.strip_prefix(':') {
            let end = value.find('<').unwrap_or(value.len());
            let text = html_to_text(&value[..end]);
            return (!text.is_empty()).then_some(text);
        }
        from = after;
    }
    None
}

/// Parses `$10,000`, `$15.00-$35.00`, `€500` or `1,000 EUR` into a [`Budget`] (`$` when no
/// currency is written, as on Upwork); `None` if it is not an amount or a rising range. Each
/// end is read by [`price`], the feed notation of the shared money tokenizer.
pub fn parse_budget(raw: &str, kind: BudgetKind) -> Option<Budget> {
    let mut currency = None;
    let mut amounts = Vec::new();
    for part in raw.split(['-', '–']) {
        if part.trim().is_empty() {
            continue;
        }
        let price = price(part)?;
        if currency.is_none() {
            currency = price.currency;
        }
        amounts.push(price.value);
    }
    let (min, max) = match amounts.as_slice() {
        [one] => (*one, *one),
        [low, high] if low <= high => (*low, *high),
        _ => return None,
    };
    if !min.is_finite() || !max.is_finite() || min < 0.0 {
        return None;
    }
    Some(Budget {
        min,
        max,
        currency: currency.unwrap_or_else(|| "USD".to_owned()),
        kind,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fixed_budget_item() {
        let html = "Campaign to kick off Q4 &#039;21 <br /><br /><b>Budget</b>: $65,000\n\
            <br /><b>Posted On</b>: August 31, 2021 21:52 UTC<br /><b>Category</b>: Cartoons &amp; Comics\
            <br /><b>Skills</b>:Marketing Strategy,     Internet Marketing\n\
            <br /><b>Location Requirement</b>: Only freelancers located in the United States may apply.\n\
            <br /><b>Country</b>: United States\n<br /><a href=\"x\">click to apply</a>\n";
        let facts = extract(html).expect("facts");
        assert_eq!(
            facts.budget,
            Some(Budget {
                min: 65_000.0,
                max: 65_000.0,
                currency: "USD".into(),
                kind: BudgetKind::Fixed
            })
        );
        assert_eq!(facts.category.as_deref(), Some("Cartoons & Comics"));
        assert_eq!(facts.skills, ["Marketing Strategy", "Internet Marketing"]);
        assert_eq!(facts.country.as_deref(), Some("United States"));
    }

    #[test]
    fn hourly_range_item() {
        let html = "Need help<br /><b>Hourly Range</b>: $15.00-$35.00\n<br /><b>Posted On</b>: x\
                    <br /><b>Category</b>: Web Development<br /><b>Skills</b>:PHP\n<br />\
                    <b>Country</b>: India\n";
        let facts = extract(html).expect("facts");
        assert_eq!(
            facts.budget,
            Some(Budget {
                min: 15.0,
                max: 35.0,
                currency: "USD".into(),
                kind: BudgetKind::Hourly
            })
        );
        assert_eq!(facts.skills, ["PHP"]);
        assert_eq!(facts.country.as_deref(), Some("India"));
        assert_eq!(
            facts.summary_line().as_deref(),
            Some(
                "Budget: $15.00–$35.00/hr | Category: Web Development | Country: India | Skills: PHP"
            )
        );
    }

    #[test]
    fn text_without_labels_has_no_facts() {
        assert_eq!(extract("<p>We need a Budget: $5 developer</p>"), None);
        assert_eq!(extract("<b>Budget</b>"), None);
    }

    #[test]
    fn budgets_parse_or_are_rejected() {
        let b = parse_budget("$1,500", BudgetKind::Fixed).expect("budget");
        assert_eq!((b.min, b.max), (1500.0, 1500.0));
        let b = parse_budget("€20 - €40", BudgetKind::Hourly).expect("budget");
        assert_eq!((b.min, b.max, b.currency.as_str()), (20.0, 40.0, "EUR"));
        assert_eq!(parse_budget("negotiable", BudgetKind::Fixed), None);
        assert_eq!(parse_budget("$40-$20", BudgetKind::Hourly), None);
        assert_eq!(parse_budget("", BudgetKind::Fixed), None);
    }

    #[test]
    fn upwork_suffix_is_removed_from_titles() {
        assert_eq!(
            clean_title("Digital Marketing - Upwork"),
            "Digital Marketing"
        );
        assert_eq!(clean_title("Plain title"), "Plain title");
    }
}
