//! What the main bot says to an employer placing a vacancy: the four questions, the category
//! picker, the preview with its price, the invoice, and what became of the placement (paid,
//! out, refunded). Telegram HTML; what the employer wrote is escaped.

use jobwire_core::placement::{
    MAX_BODY_CHARS, MAX_CATEGORIES, MIN_BODY_CHARS, PlacementInputError,
};
use jobwire_store::{REASON_CHANGED, REASON_NOT_A_VACANCY, REASON_NOT_CHECKED, REASON_OFF};

use super::format::escape;
use super::lang::Lang;

pub fn off(lang: Lang) -> String {
    tr!(
        lang,
        "Размещение вакансий сейчас выключено.",
        "Placing vacancies is switched off for now."
    )
}

/// The menu button.
pub fn place_button(lang: Lang) -> String {
    tr!(lang, "📌 Разместить вакансию", "📌 Post a vacancy")
}

pub fn ask_title(lang: Lang) -> String {
    tr!(
        lang,
        "📌 <b>Размещение вакансии</b>, шаг 1 из 5.\n\nКак называется задача? Одна строка, например: «Лендинг для кофейни на Tilda». /cancel — выйти.",
        "📌 <b>Posting a vacancy</b>, step 1 of 5.\n\nWhat is the job called? One line, e.g. “Landing page for a coffee shop”. /cancel to leave."
    )
}

pub fn ask_body(lang: Lang) -> String {
    let (min, max) = (MIN_BODY_CHARS, MAX_BODY_CHARS);
    tr!(
        lang,
        "Шаг 2 из 5. Опишите задачу: что нужно сделать, сроки, требования ({min}–{max} символов).",
        "Step 2 of 5. Describe the job: what is to be done, deadlines, requirements ({min}–{max} characters)."
    )
}

pub fn ask_budget(lang: Lang) -> String {
    tr!(
        lang,
        "Шаг 3 из 5. Бюджет, например «50 000 ₽» или «$300–500». Если бюджета нет — отправьте «-».",
        "Step 3 of 5. The budget, e.g. “$300–500”. No budget: send “-”."
    )
}

pub fn ask_contact(lang: Lang) -> String {
    tr!(
        lang,
        "Шаг 4 из 5. Как с вами связаться: @username, ссылка t.me, e-mail или телефон.",
        "Step 4 of 5. How to reach you: @username, a t.me link, an e-mail or a phone number."
    )
}

pub fn ask_categories(lang: Lang, prices: &[(String, u32)]) -> String {
    let list: Vec<String> = prices
        .iter()
        .map(|(name, stars)| format!("• {} — {stars} ⭐", escape(name)))
        .collect();
    let list = list.join("\n");
    let max = MAX_CATEGORIES;
    tr!(
        lang,
        "Шаг 5 из 5. В каких категориях показать вакансию (до {max})? Цена — за каждую:\n{list}",
        "Step 5 of 5. Which categories should show it (up to {max})? The price is per category:\n{list}"
    )
}

pub fn done_button(lang: Lang) -> String {
    tr!(lang, "Готово ➡️", "Done ➡️")
}

pub fn pick_a_category(lang: Lang) -> String {
    tr!(
        lang,
        "Выберите хотя бы одну категорию.",
        "Choose at least one category."
    )
}

pub fn too_many_categories(lang: Lang) -> String {
    let max = MAX_CATEGORIES;
    tr!(
        lang,
        "Не больше {max} категорий.",
        "At most {max} categories."
    )
}

/// Under the preview card.
pub fn preview(lang: Lang, stars: u32, parts: &[(String, u32)]) -> String {
    let sum: Vec<String> = parts
        .iter()
        .map(|(name, s)| format!("{} {s} ⭐", escape(name)))
        .collect();
    let sum = sum.join(" + ");
    tr!(
        lang,
        "👆 Так вакансию увидят подписчики (с пометкой «Direct placement»). Перед рассылкой её проверит классификатор: если это не вакансия, звёзды вернутся.\n\nЦена: <b>{stars} ⭐</b> ({sum}).",
        "👆 This is how subscribers will see it (marked “Direct placement”). A classifier checks it before it goes out: if it is not a vacancy, your Stars come back.\n\nPrice: <b>{stars} ⭐</b> ({sum})."
    )
}

pub fn pay_button(lang: Lang, stars: u32) -> String {
    tr!(lang, "Оплатить {stars} ⭐", "Pay {stars} ⭐")
}

pub fn edit_button(lang: Lang) -> String {
    tr!(lang, "✏️ Изменить", "✏️ Edit")
}

pub fn cancel_button(lang: Lang) -> String {
    tr!(lang, "🗑 Удалить", "🗑 Delete")
}

pub fn canceled(lang: Lang, had: bool) -> String {
    if had {
        tr!(
            lang,
            "Черновик вакансии удалён.",
            "The draft vacancy was deleted."
        )
    } else {
        tr!(lang, "Черновика нет.", "There is no draft.")
    }
}

pub fn no_draft(lang: Lang) -> String {
    tr!(
        lang,
        "Черновик не найден: начните заново — /post.",
        "No draft found: start again with /post."
    )
}

pub fn invoice_title(lang: Lang) -> String {
    tr!(lang, "Размещение вакансии", "Vacancy placement")
}

pub fn invoice_description(lang: Lang, title: &str, categories: &str) -> String {
    let title: String = title.chars().take(100).collect();
    let categories: String = categories.chars().take(100).collect();
    tr!(
        lang,
        "«{title}» — рассылка подписчикам: {categories}.",
        "“{title}” sent to the subscribers of: {categories}."
    )
}

pub fn invoice_sent(lang: Lang) -> String {
    tr!(
        lang,
        "Счёт выше. После оплаты вакансия уйдёт подписчикам.",
        "The invoice is above. Once paid, the vacancy goes to subscribers."
    )
}

/// After the payment.
pub fn paid(lang: Lang, stars: i64, approval: bool) -> String {
    if approval {
        tr!(
            lang,
            "✅ Оплата {stars} ⭐ получена. Вакансию проверит модератор; если он откажет, звёзды вернутся.",
            "✅ Payment of {stars} ⭐ received. A moderator will check the vacancy; if it is refused, your Stars come back."
        )
    } else {
        tr!(
            lang,
            "✅ Оплата {stars} ⭐ получена. Вакансия уходит на проверку и рассылку.",
            "✅ Payment of {stars} ⭐ received. The vacancy is being checked and sent out."
        )
    }
}

/// The payment came for a draft changed after its invoice.
pub fn paid_for_changed(lang: Lang, stars: i64) -> String {
    tr!(
        lang,
        "Оплата {stars} ⭐ пришла за черновик, изменённый после счёта. Звёзды вернутся; оплатите новый счёт из /post.",
        "The payment of {stars} ⭐ was for a draft changed after its invoice. Your Stars come back; pay the new invoice from /post."
    )
}

pub fn delivered(lang: Lang, title: &str, subscribers: usize) -> String {
    let title = escape(title);
    tr!(
        lang,
        "📌 Вакансия «{title}» разослана: {subscribers} подписчикам.",
        "📌 Your vacancy “{title}” went out to {subscribers} subscribers."
    )
}

pub fn refunded(lang: Lang, stars: i64, reason: Option<&str>) -> String {
    let why = match reason {
        Some(REASON_NOT_A_VACANCY) => tr!(
            lang,
            "проверка не признала текст вакансией",
            "the check did not find a vacancy in it"
        ),
        Some(REASON_OFF) => tr!(
            lang,
            "размещение вакансий сейчас выключено",
            "placing vacancies is switched off"
        ),
        Some(REASON_NOT_CHECKED) => tr!(
            lang,
            "проверка не успела вовремя",
            "the check did not finish in time"
        ),
        Some(REASON_CHANGED) => tr!(
            lang,
            "черновик изменился после счёта",
            "the draft changed after its invoice"
        ),
        Some(words) if !words.trim().is_empty() => {
            let words = escape(words.trim());
            tr!(lang, "модератор: {words}", "the moderator: {words}")
        }
        _ => tr!(lang, "модератор отказал", "a moderator refused it"),
    };
    tr!(
        lang,
        "↩️ Вакансия не опубликована ({why}). {stars} ⭐ возвращены.",
        "↩️ The vacancy was not published ({why}). {stars} ⭐ refunded."
    )
}

pub fn input_error(lang: Lang, e: &PlacementInputError) -> String {
    match e {
        PlacementInputError::Empty => tr!(
            lang,
            "Пусто. Напишите текстом.",
            "Empty. Please write it as text."
        ),
        PlacementInputError::TooLong { max } => tr!(
            lang,
            "Слишком длинно: не больше {max} символов.",
            "Too long: at most {max} characters."
        ),
        PlacementInputError::TooShort { min } => tr!(
            lang,
            "Слишком коротко: хотя бы {min} символов, чтобы исполнитель понял задачу.",
            "Too short: at least {min} characters, so that a freelancer understands the job."
        ),
        PlacementInputError::NotAContact => tr!(
            lang,
            "Это не похоже на контакт: нужен @username, ссылка t.me, e-mail или телефон.",
            "That does not look like a contact: a @username, a t.me link, an e-mail or a phone number."
        ),
    }
}

/// A placement's payment refunded outside the placement (support, a dispute).
pub fn refunded_elsewhere(lang: Lang, stars: i64) -> String {
    tr!(
        lang,
        "↩️ {stars} ⭐ за размещение вакансии возвращены; вакансия не будет опубликована, если ещё не вышла.",
        "↩️ {stars} ⭐ for a vacancy placement were refunded; the vacancy will not be published if it has not gone out yet."
    )
}

/// Refusals of the pre-checkout query.
pub fn refuse_stale(lang: Lang) -> String {
    tr!(
        lang,
        "Этот счёт устарел: черновик изменился. Откройте /post и оплатите новый.",
        "This invoice is out of date: the draft changed. Open /post and pay the new one."
    )
}
