//! Callback data: what a button of the main bot does, encoded in its callback data and
//! decoded again. The rooms build their buttons with it; the router decodes a tap and hands
//! it to the room it concerns. (The buttons under a card are [`jobwire_core::card`]'s.)

use jobwire_core::CategorySlug;
use teloxide::types::InlineKeyboardButton;

use crate::dialogue::DialogueState;
use crate::texts::{self, Lang};

/// A screen of the main bot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Screen {
    Main,
    Categories,
    Filters,
    Status,
    Help,
    Plans,
}

/// What a button does. Encoded in ≤ 64 bytes of callback data; toggles carry the state they
/// set (`cat:web:1`), so a redelivered tap changes nothing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Callback {
    Screen(Screen),
    Category {
        slug: CategorySlug,
        on: bool,
    },
    Pause(bool),
    Ask(DialogueState),
    /// Send the plan's invoice (`card`: through the payment provider).
    Buy {
        plan: String,
        card: bool,
    },
    CancelRenewal,
    /// Show a hidden author again (`/status`), by its entry's id.
    ShowAuthor(i64),
    /// After "Resume": also send the best of what was missed (`true`), or only new ones.
    CatchUp(bool),
    /// Receive vacancies, résumés or both.
    Wants(jobwire_core::card::Wants),
    /// A step of placing a vacancy.
    Place(PlaceStep),
}

/// The buttons of placing a vacancy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum PlaceStep {
    /// Start (or continue) a placement: the menu button.
    New,
    /// Choose (or drop) a category.
    Category {
        slug: CategorySlug,
        on: bool,
    },
    /// Categories chosen: the preview.
    Done,
    Pay,
    Edit,
    Cancel,
}

impl Callback {
    pub(crate) fn encode(&self) -> String {
        match self {
            Self::Screen(s) => format!(
                "menu:{}",
                match s {
                    Screen::Main => "main",
                    Screen::Categories => "cats",
                    Screen::Filters => "filters",
                    Screen::Status => "status",
                    Screen::Help => "help",
                    Screen::Plans => "plans",
                }
            ),
            Self::Category { slug, on } => format!("cat:{slug}:{}", u8::from(*on)),
            Self::Pause(p) => format!("pause:{}", u8::from(*p)),
            Self::Ask(state) => format!("ask:{}", ask_name(*state)),
            Self::Buy { plan, card } => format!("buy:{plan}:{}", u8::from(*card)),
            Self::CancelRenewal => "renew:0".to_owned(),
            Self::ShowAuthor(id) => format!("unhide:{id}"),
            Self::CatchUp(missed) => format!("resume:{}", u8::from(*missed)),
            Self::Wants(w) => format!("wants:{}", w.as_str()),
            Self::Place(PlaceStep::Category { slug, on }) => {
                format!("pcat:{slug}:{}", u8::from(*on))
            }
            Self::Place(step) => format!(
                "place:{}",
                match step {
                    PlaceStep::New => "new",
                    PlaceStep::Done => "done",
                    PlaceStep::Pay => "pay",
                    PlaceStep::Edit => "edit",
                    PlaceStep::Cancel | PlaceStep::Category { .. } => "cancel",
                }
            ),
        }
    }

    pub(crate) fn decode(data: &str) -> Option<Self> {
        let mut parts = data.split(':');
        let head = parts.next()?;
        let a = parts.next()?;
        let b = parts.next();
        if parts.next().is_some() {
            return None;
        }
        let flag = |v: Option<&str>| match v {
            Some("1") => Some(true),
            Some("0") => Some(false),
            _ => None,
        };
        match head {
            "menu" if b.is_none() => Some(Self::Screen(match a {
                "main" => Screen::Main,
                "cats" => Screen::Categories,
                "filters" => Screen::Filters,
                "status" => Screen::Status,
                "help" => Screen::Help,
                "plans" => Screen::Plans,
                _ => return None,
            })),
            "buy" => Some(Self::Buy {
                plan: jobwire_core::billing::PlanId::parse(a).ok()?.to_string(),
                card: flag(b)?,
            }),
            "renew" if a == "0" && b.is_none() => Some(Self::CancelRenewal),
            "unhide" if b.is_none() => Some(Self::ShowAuthor(a.parse().ok().filter(|id| *id > 0)?)),
            "cat" => Some(Self::Category {
                slug: CategorySlug::parse(a).ok()?,
                on: flag(b)?,
            }),
            "pause" if b.is_none() => Some(Self::Pause(flag(Some(a))?)),
            "resume" if b.is_none() => Some(Self::CatchUp(flag(Some(a))?)),
            "pcat" => Some(Self::Place(PlaceStep::Category {
                slug: CategorySlug::parse(a).ok()?,
                on: flag(b)?,
            })),
            "place" if b.is_none() => Some(Self::Place(match a {
                "new" => PlaceStep::New,
                "done" => PlaceStep::Done,
                "pay" => PlaceStep::Pay,
                "edit" => PlaceStep::Edit,
                "cancel" => PlaceStep::Cancel,
                _ => return None,
            })),
            "wants" if b.is_none() => Some(Self::Wants(jobwire_core::card::Wants::parse(a)?)),
            "ask" if b.is_none() => Some(Self::Ask(match a {
                "include" => DialogueState::Include,
                "exclude" => DialogueState::Exclude,
                "budget" => DialogueState::MinBudget,
                "quiet" => DialogueState::QuietHours,
                "report" => DialogueState::Report,
                _ => return None,
            })),
            _ => None,
        }
    }
}

pub(crate) fn ask_name(state: DialogueState) -> &'static str {
    match state {
        DialogueState::Include => "include",
        DialogueState::Exclude => "exclude",
        DialogueState::MinBudget => "budget",
        DialogueState::QuietHours => "quiet",
        DialogueState::Report => "report",
        DialogueState::PlaceTitle => "place_title",
        DialogueState::PlaceBody => "place_body",
        DialogueState::PlaceBudget => "place_budget",
        DialogueState::PlaceContact => "place_contact",
    }
}

/// A button that does `cb`.
pub(crate) fn button(text: impl Into<String>, cb: &Callback) -> InlineKeyboardButton {
    InlineKeyboardButton::callback(text.into(), cb.encode())
}

/// The last rows of the status and plans keyboards: "cancel renewal" for a renewing
/// subscription, then back to the menu.
pub(crate) fn closing_rows(lang: Lang, cancel_renewal: bool) -> Vec<Vec<InlineKeyboardButton>> {
    let mut rows = Vec::new();
    if cancel_renewal {
        rows.push(vec![button(
            texts::billing::cancel_button(lang),
            &Callback::CancelRenewal,
        )]);
    }
    rows.push(vec![button(
        texts::labels(lang).back,
        &Callback::Screen(Screen::Main),
    )]);
    rows
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn callback_data_round_trips_and_fits() {
        let all = [
            Callback::Screen(Screen::Main),
            Callback::Screen(Screen::Categories),
            Callback::Screen(Screen::Filters),
            Callback::Screen(Screen::Status),
            Callback::Screen(Screen::Help),
            Callback::Category {
                slug: CategorySlug::parse(&"x".repeat(32)).unwrap(),
                on: true,
            },
            Callback::Category {
                slug: CategorySlug::parse("web").unwrap(),
                on: false,
            },
            Callback::Pause(true),
            Callback::Pause(false),
            Callback::Ask(DialogueState::Include),
            Callback::Ask(DialogueState::Exclude),
            Callback::Ask(DialogueState::MinBudget),
            Callback::Ask(DialogueState::QuietHours),
            Callback::Ask(DialogueState::Report),
            Callback::Screen(Screen::Plans),
            Callback::Buy {
                plan: "x".repeat(32),
                card: true,
            },
            Callback::Buy {
                plan: "month".into(),
                card: false,
            },
            Callback::CancelRenewal,
            Callback::ShowAuthor(i64::MAX),
            Callback::CatchUp(true),
            Callback::CatchUp(false),
            Callback::Wants(jobwire_core::card::Wants::Both),
            Callback::Wants(jobwire_core::card::Wants::Resumes),
            Callback::Place(PlaceStep::New),
            Callback::Place(PlaceStep::Done),
            Callback::Place(PlaceStep::Pay),
            Callback::Place(PlaceStep::Edit),
            Callback::Place(PlaceStep::Cancel),
            Callback::Place(PlaceStep::Category {
                slug: CategorySlug::parse(&"x".repeat(32)).unwrap(),
                on: true,
            }),
        ];
        for cb in all {
            let data = cb.encode();
            assert!(data.len() <= 64, "{data}");
            assert_eq!(Callback::decode(&data), Some(cb));
        }
        assert_eq!(
            Callback::encode(&Callback::Category {
                slug: CategorySlug::parse("web").unwrap(),
                on: true
            }),
            "cat:web:1"
        );
        for bad in [
            "",
            "cat:web",
            "cat:Web!:1",
            "cat:web:2",
            "menu:x",
            "pause:1:1",
            "x:y",
        ] {
            assert_eq!(Callback::decode(bad), None, "{bad}");
        }
    }
}
