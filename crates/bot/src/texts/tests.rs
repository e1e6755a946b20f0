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
