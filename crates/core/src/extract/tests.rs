//! End-to-end tests of [`extract`](super::extract) over whole posts and arbitrary text, and
//! the budget constructor the other test modules share.

use proptest::prelude::*;

use super::*;
use BudgetBasis::Fixed;

pub(super) fn b(min: f64, max: Option<f64>, currency: &str, basis: BudgetBasis) -> Option<Budget> {
    Some(Budget {
        min,
        max,
        currency: currency.into(),
        basis,
    })
}

#[test]
fn a_whole_post() {
    let post = "#заказ #сайт #tilda\n\nНужен лендинг на Тильде для бренда косметики 🌿\n\
                Что нужно:\n— главный экран + каталог\n— адаптив\n\
                Срок: 7-10 дней\nБюджет: 25 000 ₽\nУдалённо.\n\n\
                Писать в ЛС @anna_kosmetika с примерами работ на Tilda";
    let e = extract(post);
    assert_eq!(
        e.title.as_deref(),
        Some("Нужен лендинг на Тильде для бренда косметики")
    );
    assert_eq!(e.budget, b(25_000.0, None, "RUB", Fixed));
    assert_eq!(e.deadline.as_deref(), Some("7-10 дней"));
    assert_eq!(e.work_mode, Some(WorkMode::Remote));
    assert_eq!(e.skills, ["Tilda"]);
    assert_eq!(e.contact.as_deref(), Some("@anna_kosmetika"));
    assert!(!e.is_empty());
    assert!(extract("").is_empty());
}

#[test]
fn huge_and_odd_inputs_are_bounded() {
    let huge = "Бюджет 5к ".repeat(100_000);
    let e = extract(&huge);
    assert_eq!(e.budget, b(5000.0, None, "RUB", Fixed));
    for odd in [
        "$",
        "₽",
        "1",
        "9".repeat(40).as_str(),
        "$-",
        "от до",
        "@",
        "t.me/",
        "#",
        "\u{1F}",
    ] {
        let _ = extract(odd);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn never_panics_on_arbitrary_text(text in any::<String>()) {
        let e = extract(&text);
        prop_assert!(e.skills.len() <= MAX_SKILLS);
        if let Some(t) = &e.title {
            prop_assert!(t.chars().count() <= MAX_TITLE_CHARS);
        }
        if let Some(d) = &e.deadline {
            prop_assert!(d.chars().count() <= MAX_DEADLINE_CHARS);
        }
        if let Some(b) = &e.budget {
            prop_assert!(b.min.is_finite() && b.min > 0.0);
            prop_assert!(b.max.is_none_or(|m| m > b.min));
        }
    }

    #[test]
    fn never_panics_on_money_like_text(
        parts in proptest::collection::vec(
            prop_oneof![
                Just("$".to_owned()), Just("₽".to_owned()), Just("к".to_owned()),
                Just("тыс.".to_owned()), Just("-".to_owned()), Just("–".to_owned()),
                Just(" ".to_owned()), Just("\n".to_owned()), Just("до ".to_owned()),
                Just("от ".to_owned()), Just("/час".to_owned()), Just("/mo".to_owned()),
                Just("Бюджет: ".to_owned()), Just("@".to_owned()), Just("t.me/".to_owned()),
                Just(",".to_owned()), Just(".".to_owned()), Just("срок".to_owned()),
                Just("😀".to_owned()), Just("\u{a0}".to_owned()),
                "[0-9]{1,6}", "[a-zа-я_]{1,8}",
            ],
            0..60,
        )
    ) {
        let text = parts.concat();
        let e = extract(&text);
        if let Some(b) = &e.budget {
            prop_assert!(b.min.is_finite() && b.min > 0.0, "{text:?} {b:?}");
        }
    }
}
