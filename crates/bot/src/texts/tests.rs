#![allow(clippy::unwrap_used)]

use super::*;

#[test]
fn languages_and_amounts() {
    assert_eq!(Lang::from_code(None), Lang::Ru);
    assert_eq!(Lang::from_code(Some("ru")), Lang::Ru);
    assert_eq!(Lang::from_code(Some("uk-UA")), Lang::Ru);
    assert_eq!(Lang::from_code(Some("en")), Lang::En);
    assert_eq!(Lang::from_code(Some("de")), Lang::En);
    assert_eq!(amount(5000.0), "5\u{a0}000");
    assert_eq!(amount(150_000.0), "150\u{a0}000");
    assert_eq!(amount(12.5), "12.5");
    assert_eq!(amount(999.0), "999");
    assert_eq!(escape("<b>&\""), "&lt;b&gt;&amp;&quot;");
}

#[test]
fn quotes_are_cut_on_a_character_boundary_and_escaped() {
    assert_eq!(quote("<b>"), "&lt;b&gt;");
    let long = "я".repeat(MAX_QUOTE_CHARS + 1);
    let q = quote(&long);
    assert_eq!(q.chars().count(), MAX_QUOTE_CHARS + 1);
    assert!(q.ends_with("я…"));
    assert_eq!(
        quote(&"я".repeat(MAX_QUOTE_CHARS)),
        "я".repeat(MAX_QUOTE_CHARS)
    );
    // The cut comes before escaping: an entity is never split.
    assert!(quote(&"&".repeat(100)).ends_with("&amp;…"));
}

#[test]
fn the_report_limit_is_explained_in_both_languages() {
    assert!(report_limited(Lang::Ru, 10).contains("не больше 10 в час"));
    assert!(report_limited(Lang::En, 10).contains("at most 10 an hour"));
}
