//! Direct placements: a vacancy an employer writes in the main bot and pays for in Stars.
//!
//! The employer answers four questions (title, text, budget, contact) and picks categories;
//! [`compose`] turns the answers into the post text the classifier and the subscribers see,
//! [`price`] prices the placement from the configured per-category prices, and the invoice
//! carries a [`PlacementPayload`]. A paid placement becomes a post of the source
//! [`DIRECT_SOURCE`]; its card is marked as a direct placement.

use std::collections::BTreeMap;

use crate::CategorySlug;

/// The channel handle of direct placements: posts of this source are employers' own.
pub const DIRECT_SOURCE: &str = "direct";

/// Longest title, in characters.
pub const MAX_TITLE_CHARS: usize = 120;
/// Shortest and longest description, in characters: enough to be a vacancy, short enough to
/// fit one card with its header.
pub const MIN_BODY_CHARS: usize = 30;
pub const MAX_BODY_CHARS: usize = 3000;
/// Longest budget and contact, in characters.
pub const MAX_BUDGET_CHARS: usize = 100;
pub const MAX_CONTACT_CHARS: usize = 100;
/// Most categories one placement is sold for.
pub const MAX_CATEGORIES: usize = 3;
/// The most one Stars invoice may ask (Telegram's limit, as for subscriptions).
pub const MAX_INVOICE_STARS: u32 = crate::billing::MAX_SUBSCRIPTION_STARS;

/// Where a placement is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PlacementStatus {
    /// Being written in the main bot.
    Draft,
    /// An invoice was sent for it (its nonce is stored); editing it goes back to a draft.
    Invoiced,
    /// Paid; an admin approves or refuses it (`[placements] approval`).
    AwaitingApproval,
    /// Paid (and approved when approval is on): to be published.
    Approved,
    /// A post of the source `direct`, going through classification.
    Published,
    /// Classified as a vacancy and fanned out. Final.
    Delivered,
    /// Refused by an admin, or not publishable (not a vacancy): to be refunded.
    Refused,
    /// A refund is being made (claimed by one process).
    Refunding,
    /// Refunded. Final.
    Refunded,
    /// The employer gave up the draft. Final.
    Canceled,
}

impl PlacementStatus {
    pub const ALL: [PlacementStatus; 10] = [
        Self::Draft,
        Self::Invoiced,
        Self::AwaitingApproval,
        Self::Approved,
        Self::Published,
        Self::Delivered,
        Self::Refused,
        Self::Refunding,
        Self::Refunded,
        Self::Canceled,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Draft => "draft",
            Self::Invoiced => "invoiced",
            Self::AwaitingApproval => "awaiting_approval",
            Self::Approved => "approved",
            Self::Published => "published",
            Self::Delivered => "delivered",
            Self::Refused => "refused",
            Self::Refunding => "refunding",
            Self::Refunded => "refunded",
            Self::Canceled => "canceled",
        }
    }

    pub fn parse(raw: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|s| s.as_str() == raw)
    }

    /// Still being written (one open draft per chat).
    pub fn is_open(self) -> bool {
        matches!(self, Self::Draft | Self::Invoiced)
    }
}

/// The invoice payload of a placement: `jwp1:<placement id>:<chat id>:<nonce>` (≤ 128 bytes,
/// as Telegram asks). Subscription invoices use `jw1:` ([`crate::billing::InvoicePayload`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlacementPayload {
    pub placement: i64,
    pub chat_id: i64,
    pub nonce: String,
}

impl PlacementPayload {
    const PREFIX: &'static str = "jwp1";

    pub fn encode(&self) -> String {
        format!(
            "{}:{}:{}:{}",
            Self::PREFIX,
            self.placement,
            self.chat_id,
            self.nonce
        )
    }

    /// Whether a payload is a placement's (whatever else is wrong with it).
    pub fn is_placement(raw: &str) -> bool {
        raw.split(':').next() == Some(Self::PREFIX)
    }

    pub fn parse(raw: &str) -> Option<Self> {
        let (id, chat, nonce) = crate::billing::payload_fields(raw, Self::PREFIX)?;
        let placement = id.parse().ok().filter(|id| *id > 0)?;
        let chat_id = chat.parse().ok()?;
        let nonce_ok =
            (8..=64).contains(&nonce.len()) && nonce.bytes().all(|b| b.is_ascii_alphanumeric());
        nonce_ok.then(|| Self {
            placement,
            chat_id,
            nonce: nonce.to_owned(),
        })
    }
}

/// Why an answer to a placement question is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PlacementInputError {
    #[error("empty")]
    Empty,
    #[error("longer than {max} characters")]
    TooLong { max: usize },
    #[error("shorter than {min} characters")]
    TooShort { min: usize },
    #[error("not a contact")]
    NotAContact,
}

fn chars(text: &str) -> usize {
    text.chars().count()
}

/// The title: one line, not empty, at most [`MAX_TITLE_CHARS`].
pub fn parse_title(raw: &str) -> Result<String, PlacementInputError> {
    let title = raw.split_whitespace().collect::<Vec<_>>().join(" ");
    if title.is_empty() {
        return Err(PlacementInputError::Empty);
    }
    if chars(&title) > MAX_TITLE_CHARS {
        return Err(PlacementInputError::TooLong {
            max: MAX_TITLE_CHARS,
        });
    }
    Ok(title)
}

/// The description: its lines kept, between [`MIN_BODY_CHARS`] and [`MAX_BODY_CHARS`].
pub fn parse_body(raw: &str) -> Result<String, PlacementInputError> {
    let body = raw.trim();
    match chars(body) {
        0 => Err(PlacementInputError::Empty),
        n if n < MIN_BODY_CHARS => Err(PlacementInputError::TooShort {
            min: MIN_BODY_CHARS,
        }),
        n if n > MAX_BODY_CHARS => Err(PlacementInputError::TooLong {
            max: MAX_BODY_CHARS,
        }),
        _ => Ok(body.to_owned()),
    }
}

/// The budget as the employer writes it ("50 000 ₽", "$500–800"); `-` or "нет" for none.
pub fn parse_budget(raw: &str) -> Result<Option<String>, PlacementInputError> {
    let budget = raw.split_whitespace().collect::<Vec<_>>().join(" ");
    if budget.is_empty() {
        return Err(PlacementInputError::Empty);
    }
    if matches!(
        budget.to_lowercase().as_str(),
        "-" | "—" | "нет" | "no" | "none" | "договорная" | "negotiable"
    ) {
        return Ok(None);
    }
    if chars(&budget) > MAX_BUDGET_CHARS {
        return Err(PlacementInputError::TooLong {
            max: MAX_BUDGET_CHARS,
        });
    }
    Ok(Some(budget))
}

/// How to reach the employer: `@username`, a `t.me/…` link, an e-mail or a phone number.
pub fn parse_contact(raw: &str) -> Result<String, PlacementInputError> {
    let contact = raw.trim();
    if contact.is_empty() {
        return Err(PlacementInputError::Empty);
    }
    if chars(contact) > MAX_CONTACT_CHARS {
        return Err(PlacementInputError::TooLong {
            max: MAX_CONTACT_CHARS,
        });
    }
    let username = |s: &str| {
        (5..=32).contains(&s.len())
            && s.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
            && s.bytes().next().is_some_and(|b| b.is_ascii_alphabetic())
    };
    let ok = if let Some(name) = contact.strip_prefix('@') {
        username(name)
    } else if let Some(rest) = contact
        .strip_prefix("https://")
        .or_else(|| contact.strip_prefix("http://"))
        .unwrap_or(contact)
        .strip_prefix("t.me/")
    {
        username(rest.trim_end_matches('/'))
    } else if let Some((user, domain)) = contact.split_once('@') {
        !user.is_empty()
            && user
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"._%+-".contains(&b))
            && domain
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'.' || b == b'-')
            && domain.contains('.')
            && !domain.starts_with('.')
            && !domain.ends_with('.')
    } else {
        let digits = contact.chars().filter(char::is_ascii_digit).count();
        (7..=15).contains(&digits)
            && contact
                .chars()
                .all(|c| c.is_ascii_digit() || " +-()".contains(c))
    };
    if ok {
        Ok(contact.to_owned())
    } else {
        Err(PlacementInputError::NotAContact)
    }
}

/// The post text of a placement, as the classifier and the subscribers read it.
pub fn compose(
    title: &str,
    body: &str,
    budget: Option<&str>,
    contact: &str,
    english: bool,
) -> String {
    let (budget_label, contact_label) = if english {
        ("Budget", "Contact")
    } else {
        ("Бюджет", "Контакт")
    };
    let mut text = format!("{title}\n\n{body}\n\n");
    if let Some(budget) = budget {
        text.push_str(&format!("{budget_label}: {budget}\n"));
    }
    text.push_str(&format!("{contact_label}: {contact}"));
    text
}

/// What a placement in `categories` costs: the sum of each category's price (`prices`, else
/// `default`). `None` when a category has no price and there is no default.
pub fn price(
    categories: &[CategorySlug],
    prices: &BTreeMap<CategorySlug, u32>,
    default: Option<u32>,
) -> Option<u32> {
    categories.iter().try_fold(0u32, |sum, c| {
        let p = prices.get(c).copied().or(default)?;
        Some(sum.saturating_add(p))
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn the_payload_round_trips_and_rejects_anything_else() {
        let p = PlacementPayload {
            placement: 7,
            chat_id: 42,
            nonce: "a1b2c3d4e5f6a7b8".into(),
        };
        let raw = p.encode();
        assert_eq!(raw, "jwp1:7:42:a1b2c3d4e5f6a7b8");
        assert!(PlacementPayload::is_placement(&raw));
        assert_eq!(PlacementPayload::parse(&raw), Some(p));
        for bad in [
            "",
            "jwp1:7:42",
            "jwp1:0:42:a1b2c3d4e5f6a7b8",
            "jwp1:x:42:a1b2c3d4e5f6a7b8",
            "jw1:month:42:a1b2c3d4e5f6a7b8",
            "jwp1:7:42:short",
            "jwp1:7:42:a1b2c3d4e5f6a7b8:extra",
        ] {
            assert_eq!(PlacementPayload::parse(bad), None, "{bad}");
        }
        assert!(!PlacementPayload::is_placement(
            "jw1:month:42:a1b2c3d4e5f6a7b8"
        ));
    }

    #[test]
    fn statuses_round_trip() {
        for s in PlacementStatus::ALL {
            assert_eq!(PlacementStatus::parse(s.as_str()), Some(s));
        }
        assert_eq!(PlacementStatus::parse("paid"), None);
    }

    #[test]
    fn answers_are_checked() {
        assert_eq!(parse_title("  Rust   backend\n"), Ok("Rust backend".into()));
        assert_eq!(parse_title(" "), Err(PlacementInputError::Empty));
        assert!(matches!(
            parse_title(&"x".repeat(121)),
            Err(PlacementInputError::TooLong { max: 120 })
        ));
        assert!(matches!(
            parse_body("too short"),
            Err(PlacementInputError::TooShort { .. })
        ));
        assert_eq!(parse_budget("-"), Ok(None));
        assert_eq!(parse_budget("50 000 ₽"), Ok(Some("50 000 ₽".into())));
        for ok in [
            "@anna_hr",
            "t.me/anna_hr",
            "https://t.me/anna_hr",
            "hr@example.com",
            "+7 (999) 123-45-67",
        ] {
            assert_eq!(parse_contact(ok), Ok(ok.into()), "{ok}");
        }
        for bad in ["@ab", "write me", "12", "a@b", "<script>@x.y"] {
            assert!(parse_contact(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn the_text_names_budget_and_contact_and_the_price_sums_categories() {
        let text = compose("Title", "Body text", Some("100 $"), "@anna_hr", true);
        assert_eq!(
            text,
            "Title\n\nBody text\n\nBudget: 100 $\nContact: @anna_hr"
        );
        let ru = compose("Т", "Текст", None, "@anna_hr", false);
        assert_eq!(ru, "Т\n\nТекст\n\nКонтакт: @anna_hr");
        let web = CategorySlug::parse("web").unwrap();
        let design = CategorySlug::parse("design").unwrap();
        let prices = BTreeMap::from([(web.clone(), 150)]);
        assert_eq!(price(std::slice::from_ref(&web), &prices, None), Some(150));
        assert_eq!(price(&[web.clone(), design.clone()], &prices, None), None);
        assert_eq!(price(&[web, design], &prices, Some(100)), Some(250));
    }
}
