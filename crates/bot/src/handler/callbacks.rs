//! Callback data: what a button does, encoded in its callback data and decoded again, and
//! the handling of a tap on one.

use jobwire_core::CategorySlug;
use teloxide::prelude::*;

use super::keyboards::categories_keyboard;
use super::{Turn, describe, display_name, show, truncate, user_chat};
use crate::BotError;
use crate::dialogue::DialogueState;
use crate::runtime::{BotRuntime, Inner};
use crate::texts::{self, Lang};

/// A screen of the main bot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Screen {
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
pub(super) enum Callback {
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
pub(super) enum PlaceStep {
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
    pub(super) fn encode(&self) -> String {
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

    fn decode(data: &str) -> Option<Self> {
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

pub(super) fn ask_name(state: DialogueState) -> &'static str {
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

pub(super) async fn on_callback(
    inner: &Inner,
    rt: &BotRuntime,
    q: &teloxide::types::CallbackQuery,
) -> Result<(), BotError> {
    let chat_id = q
        .message
        .as_ref()
        .map_or_else(|| user_chat(q.from.id.0), |m| m.chat().id.0);
    let message_id = q.message.as_ref().map(|m| m.id());
    let turn = Turn {
        inner,
        rt,
        chat_id,
        lang: Lang::from_code(q.from.language_code.as_deref()),
        user_name: Some(display_name(&q.from)),
    };
    // The buttons under a card work in every bot that delivers.
    if let Some((card, delivery_id)) = q
        .data
        .as_deref()
        .and_then(jobwire_core::card::CardAction::decode)
        .filter(|_| chat_id > 0)
    {
        let toast = turn.card_tap(card, delivery_id, message_id).await?;
        answer(rt, q, chat_id, Some(toast)).await;
        return Ok(());
    }
    let action = q.data.as_deref().and_then(Callback::decode);
    let toast: Option<String> = match action {
        _ if chat_id <= 0 || !rt.is_main => None,
        Some(Callback::CatchUp(missed)) => Some(turn.catch_up(missed, message_id).await?),
        Some(Callback::Wants(wants)) => {
            inner.store.set_wants(chat_id, wants, inner.now()).await?;
            tracing::info!(bot = %rt.name, chat_id, wants = wants.as_str(), "what to receive changed");
            turn.screen(Screen::Filters, message_id).await?;
            Some(texts::cards::wants_button(turn.lang, wants, true))
        }
        Some(Callback::Place(step)) => match step {
            PlaceStep::New => {
                turn.clear_dialogue().await?;
                turn.place_start().await?;
                None
            }
            PlaceStep::Category { slug, on } => turn.place_toggle(slug, on, message_id).await?,
            PlaceStep::Done => turn.place_done().await?,
            PlaceStep::Pay => {
                turn.place_pay().await?;
                None
            }
            PlaceStep::Edit => {
                turn.place_edit().await?;
                None
            }
            PlaceStep::Cancel => {
                turn.place_cancel().await?;
                None
            }
        },
        Some(Callback::ShowAuthor(id)) => {
            let toast = turn.show_author(id).await?;
            turn.screen(Screen::Status, message_id).await?;
            Some(toast)
        }
        None => {
            tracing::debug!(bot = %rt.name, chat_id, "unknown callback data");
            None
        }
        Some(Callback::Screen(Screen::Plans)) => {
            turn.clear_dialogue().await?;
            turn.plans(message_id).await?;
            None
        }
        Some(Callback::Screen(screen)) => {
            turn.clear_dialogue().await?;
            turn.screen(screen, message_id).await?;
            None
        }
        Some(Callback::Buy { plan, card }) => {
            turn.buy(&plan, card).await?;
            None
        }
        Some(Callback::CancelRenewal) => {
            turn.cancel_renewal(q.from.id).await?;
            None
        }
        Some(Callback::Pause(paused)) => Some(turn.set_paused(paused, message_id).await?),
        Some(Callback::Ask(state)) => {
            turn.ask(state).await?;
            None
        }
        Some(Callback::Category { slug, on }) => {
            match inner.views.get().iter().find(|v| v.slug == slug) {
                None => None,
                Some(view) => {
                    let mut loaded = turn.load().await?;
                    let has = loaded.spec.categories.contains(&slug);
                    if on != has {
                        if on {
                            loaded.spec.categories.push(slug.clone());
                            turn.sort_categories(&mut loaded.spec.categories);
                        } else {
                            loaded.spec.categories.retain(|c| c != &slug);
                        }
                        turn.save(&loaded).await?;
                        tracing::info!(bot = %rt.name, chat_id, category = %slug, on, "category toggled");
                    }
                    show(
                        rt,
                        chat_id,
                        message_id,
                        texts::categories_screen(
                            turn.lang,
                            &inner.views.get(),
                            &loaded.spec.categories,
                        ),
                        categories_keyboard(turn.lang, &inner.views.get(), &loaded.spec.categories),
                    )
                    .await;
                    Some(format!("{} {}", if on { "✅" } else { "▫️" }, view.name))
                }
            }
        }
    };
    answer(rt, q, chat_id, toast).await;
    Ok(())
}

/// Answers a callback query (stops the button's spinner), with a toast if given.
async fn answer(
    rt: &BotRuntime,
    q: &teloxide::types::CallbackQuery,
    chat_id: i64,
    toast: Option<String>,
) {
    let mut answer = rt.bot.answer_callback_query(q.id.clone());
    if let Some(t) = toast {
        answer = answer.text(truncate(&t, 190));
    }
    if let Err(e) = answer.await {
        tracing::debug!(bot = %rt.name, chat_id, error = %describe(&e, &rt.token), "answering a callback failed");
    }
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
