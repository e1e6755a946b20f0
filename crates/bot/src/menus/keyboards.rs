//! The main bot's inline keyboards: the menu, the filters, the categories with their
//! toggles and bot links, and "back".

use jobwire_core::CategorySlug;
use jobwire_core::card::Wants;
use teloxide::types::{InlineKeyboardButton, InlineKeyboardMarkup};

use crate::callbacks::{Callback, PlaceStep, Screen, button};
use crate::dialogue::DialogueState;
use crate::texts::{self, CategoryView, Lang};

/// The menu; with billing on, a first row opens the plans; with placements on, a last row
/// posts a vacancy.
pub(super) fn main_keyboard(
    lang: Lang,
    paused: bool,
    billing: bool,
    placements: bool,
) -> InlineKeyboardMarkup {
    let l = texts::labels(lang);
    let pause = if paused {
        button(l.resume, &Callback::Pause(false))
    } else {
        button(l.pause, &Callback::Pause(true))
    };
    let mut rows = Vec::new();
    if billing {
        rows.push(vec![button(
            texts::billing::plans_button(lang),
            &Callback::Screen(Screen::Plans),
        )]);
    }
    rows.extend(vec![
        vec![
            button(l.categories, &Callback::Screen(Screen::Categories)),
            button(l.filters, &Callback::Screen(Screen::Filters)),
        ],
        vec![pause, button(l.status, &Callback::Screen(Screen::Status))],
        vec![
            button(l.report, &Callback::Ask(DialogueState::Report)),
            button(l.help, &Callback::Screen(Screen::Help)),
        ],
    ]);
    if placements {
        rows.push(vec![button(
            texts::placements::place_button(lang),
            &Callback::Place(PlaceStep::New),
        )]);
    }
    InlineKeyboardMarkup::new(rows)
}

pub(super) fn back_keyboard(lang: Lang) -> InlineKeyboardMarkup {
    InlineKeyboardMarkup::new(vec![vec![button(
        texts::labels(lang).back,
        &Callback::Screen(Screen::Main),
    )]])
}

pub(super) fn filters_keyboard(lang: Lang, wants: Wants) -> InlineKeyboardMarkup {
    let l = texts::labels(lang);
    let choice = |w: Wants| {
        button(
            texts::cards::wants_button(lang, w, w == wants),
            &Callback::Wants(w),
        )
    };
    InlineKeyboardMarkup::new(vec![
        Wants::ALL.into_iter().map(choice).collect(),
        vec![
            button(l.include, &Callback::Ask(DialogueState::Include)),
            button(l.exclude, &Callback::Ask(DialogueState::Exclude)),
        ],
        vec![
            button(l.budget, &Callback::Ask(DialogueState::MinBudget)),
            button(l.quiet, &Callback::Ask(DialogueState::QuietHours)),
        ],
        vec![button(l.back, &Callback::Screen(Screen::Main))],
    ])
}

pub(super) fn categories_keyboard(
    lang: Lang,
    views: &[CategoryView],
    selected: &[CategorySlug],
) -> InlineKeyboardMarkup {
    let l = texts::labels(lang);
    let mut rows = Vec::new();
    for v in views {
        let on = selected.contains(&v.slug);
        let label = format!("{} {}", if on { "✅" } else { "▫️" }, v.name);
        let mut row = vec![button(
            label,
            &Callback::Category {
                slug: v.slug.clone(),
                on: !on,
            },
        )];
        if on
            && !v.delivered_by_main
            && let Ok(url) = url::Url::parse(&v.start_link())
        {
            row.push(InlineKeyboardButton::url(
                format!("{} @{}", l.open_bot, v.bot_username),
                url,
            ));
        }
        rows.push(row);
    }
    rows.push(vec![button(l.back, &Callback::Screen(Screen::Main))]);
    InlineKeyboardMarkup::new(rows)
}
