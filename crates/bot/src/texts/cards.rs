//! What the bots say about the buttons under a card: the toasts after a tap, and the hidden
//! authors in `/status`. Toasts are plain text (Telegram shows them as such), at most 200
//! characters.

use crate::card_buttons::CardAction;

use super::format::escape;
use super::lang::Lang;

/// The toast after "Not a vacancy" or "Wrong category": thanks, or "already" on a second
/// tap (nothing more is filed).
pub fn reported(lang: Lang, action: CardAction, new: bool) -> String {
    match (action, new) {
        (_, false) => tr!(
            lang,
            "Вы уже отметили эту вакансию. Спасибо!",
            "You already reported this one. Thank you!"
        ),
        (CardAction::WrongCategory, true) => tr!(
            lang,
            "Спасибо! Отметили: не та категория. Администратор проверит.",
            "Thanks! Reported as the wrong category. An admin will check it."
        ),
        (_, true) => tr!(
            lang,
            "Спасибо! Отметили: не вакансия. Администратор проверит.",
            "Thanks! Reported as not a vacancy. An admin will check it."
        ),
    }
}

/// The toast after "Hide this author".
pub fn author_hidden(lang: Lang, label: &str, new: bool) -> String {
    let label: String = label.chars().take(64).collect();
    if new {
        tr!(
            lang,
            "Автор {label} скрыт: его вакансии больше не придут. Вернуть — в /status.",
            "{label} is hidden: you will not get their posts again. /status shows them again."
        )
    } else {
        tr!(
            lang,
            "Автор {label} уже скрыт. Вернуть — в /status.",
            "{label} is hidden already. /status shows them again."
        )
    }
}

/// The toast when the card's delivery is unknown or not this user's.
pub fn card_gone(lang: Lang) -> String {
    tr!(
        lang,
        "Эта карточка больше недоступна.",
        "This card is no longer available."
    )
}

/// Hidden authors listed by name in `/status` (as many as get a "show again" button), so
/// the screen stays within Telegram's 4096 characters however many there are.
pub const MAX_LISTED: usize = 30;

/// The `/status` paragraph listing hidden authors (HTML); empty when none.
pub fn hidden_authors(lang: Lang, labels: &[String]) -> String {
    if labels.is_empty() {
        return String::new();
    }
    let mut list = labels
        .iter()
        .take(MAX_LISTED)
        .map(|l| format!("• {}", escape(&l.chars().take(64).collect::<String>())))
        .collect::<Vec<_>>()
        .join("\n");
    if labels.len() > MAX_LISTED {
        let more = labels.len() - MAX_LISTED;
        list.push_str(&tr!(lang, "\n… и ещё {more}", "\n… and {more} more"));
    }
    tr!(
        lang,
        "🙈 <b>Скрытые авторы</b> (их вакансии не приходят):\n{list}",
        "🙈 <b>Hidden authors</b> (their posts are not delivered):\n{list}"
    )
}

/// The button that shows a hidden author again.
pub fn show_again_button(lang: Lang, label: &str) -> String {
    let label: String = label.chars().take(40).collect();
    tr!(lang, "👁 Вернуть {label}", "👁 Show {label} again")
}

/// The toast after showing a hidden author again.
pub fn author_shown(lang: Lang, label: Option<&str>) -> String {
    match label {
        Some(label) => {
            let label: String = label.chars().take(64).collect();
            tr!(lang, "{label} снова в ленте.", "{label} is shown again.")
        }
        None => tr!(
            lang,
            "Этот автор уже не скрыт.",
            "That author is not hidden."
        ),
    }
}

/// After "Resume": what to do about the vacancies that came meanwhile.
pub fn resume_offer(lang: Lang, hours: u32, max: usize) -> String {
    tr!(
        lang,
        "▶️ Доставка возобновлена. Прислать лучшее из пропущенного за {hours} ч (не больше {max} вакансий) или только новые?",
        "▶️ Delivery resumed. Send the best of what you missed in the last {hours} h (at most {max} jobs), or only new ones?"
    )
}

/// The two answers to [`resume_offer`]: (only new, what I missed).
pub fn resume_buttons(lang: Lang, hours: u32) -> (String, String) {
    (
        tr!(lang, "Только новые", "Only new"),
        tr!(lang, "Пропущенное за {hours} ч", "Missed in {hours} h"),
    )
}

/// The answer when only new vacancies are wanted.
pub fn only_new(lang: Lang) -> String {
    tr!(
        lang,
        "Хорошо: только новые вакансии.",
        "Fine: only new jobs from now on."
    )
}

/// The answer after catching up: how many missed vacancies are on their way.
pub fn caught_up(lang: Lang, n: usize, hours: u32) -> String {
    if n == 0 {
        tr!(
            lang,
            "За {hours} ч не было вакансий по вашим настройкам, которых вы не видели.",
            "Nothing you have not seen matched your settings in the last {hours} h."
        )
    } else {
        tr!(
            lang,
            "Отправляем лучшие пропущенные вакансии: {n}. Дальше — только новые.",
            "Sending the best jobs you missed: {n}. After that, only new ones."
        )
    }
}

/// The settings line saying what the subscriber receives.
pub fn wants_line(lang: Lang, wants: jobwire_core::card::Wants) -> String {
    use jobwire_core::card::Wants;
    let what = match (wants, lang) {
        (Wants::Jobs, Lang::Ru) => "вакансии",
        (Wants::Jobs, Lang::En) => "jobs",
        (Wants::Resumes, Lang::Ru) => "резюме исполнителей (вы ищете фрилансеров)",
        (Wants::Resumes, Lang::En) => "résumés of freelancers (you are hiring)",
        (Wants::Both, Lang::Ru) => "вакансии и резюме",
        (Wants::Both, Lang::En) => "jobs and résumés",
    };
    tr!(lang, "<b>Присылать:</b> {what}", "<b>Send me:</b> {what}")
}

/// The label of a choice of what to receive (✅ marks the current one).
pub fn wants_button(lang: Lang, wants: jobwire_core::card::Wants, current: bool) -> String {
    use jobwire_core::card::Wants;
    let label = match (wants, lang) {
        (Wants::Jobs, Lang::Ru) => "💼 Вакансии",
        (Wants::Jobs, Lang::En) => "💼 Jobs",
        (Wants::Resumes, Lang::Ru) => "👤 Резюме",
        (Wants::Resumes, Lang::En) => "👤 Résumés",
        (Wants::Both, Lang::Ru) => "Оба",
        (Wants::Both, Lang::En) => "Both",
    };
    if current {
        format!("✅ {label}")
    } else {
        label.to_owned()
    }
}
