//! The main bot's replies to what a user sends: its questions, the confirmations of saved
//! settings, refusals of input it cannot use, and the general answers (cancel, errors).

use jobwire_core::subscriber::MinBudget;
use jobwire_store::QuietHoursSpec;

use super::format::{budget, quiet, quote, words};
use super::lang::Lang;
use crate::input::InputError;

fn current_or_none(lang: Lang, current: &str) -> String {
    if current.is_empty() {
        lang.pick("не задано", "not set").to_owned()
    } else {
        current.to_owned()
    }
}

pub fn ask_include(lang: Lang, current: &[String], max: usize) -> String {
    let cur = current_or_none(lang, &words(current));
    tr!(
        lang,
        "Сейчас: {cur}\n\nПришлите ключевые слова через запятую (до {max}), например: <code>python, django, #remote</code>\nВакансия придёт, если в ней есть хотя бы одно слово. <code>нет</code> — убрать все, /cancel — отмена.",
        "Now: {cur}\n\nSend keywords separated by commas (up to {max}), e.g. <code>python, django, #remote</code>\nA job is sent if it contains at least one. <code>none</code> clears them, /cancel cancels."
    )
}

pub fn ask_exclude(lang: Lang, current: &[String], max: usize) -> String {
    let cur = current_or_none(lang, &words(current));
    tr!(
        lang,
        "Сейчас: {cur}\n\nПришлите слова через запятую (до {max}), с которыми вакансии присылать не нужно, например: <code>бесплатно, стажировка, #офис</code>\n<code>нет</code> — убрать все, /cancel — отмена.",
        "Now: {cur}\n\nSend words separated by commas (up to {max}) that should keep a job away, e.g. <code>unpaid, internship, #office</code>\n<code>none</code> clears them, /cancel cancels."
    )
}

pub fn ask_budget(lang: Lang, current: Option<&MinBudget>) -> String {
    let cur = current.map_or_else(|| current_or_none(lang, ""), |b| budget(lang, b));
    tr!(
        lang,
        "Сейчас: {cur}\n\nПришлите минимальный бюджет, например: <code>5000 руб</code>, <code>300 usd</code>, <code>50 $/час</code>, <code>150k руб/мес</code>. Без валюты — рубли.\n<code>0</code> или <code>нет</code> — без ограничения, /cancel — отмена.",
        "Now: {cur}\n\nSend the minimum budget, e.g. <code>300 usd</code>, <code>50 $/h</code>, <code>5000 rub</code>, <code>4000 eur/month</code>. Without a currency: US dollars.\n<code>0</code> or <code>none</code> removes the limit, /cancel cancels."
    )
}

pub fn ask_quiet(lang: Lang, current: Option<&QuietHoursSpec>) -> String {
    let cur = current.map_or_else(|| current_or_none(lang, ""), quiet);
    tr!(
        lang,
        "Сейчас: {cur}\n\nПришлите интервал и часовой пояс, например: <code>23:00-08:00 Europe/Moscow</code>. Вакансии за это время придут утром.\n<code>выкл</code> — выключить, /cancel — отмена.",
        "Now: {cur}\n\nSend the window and your time zone, e.g. <code>23:00-08:00 Europe/London</code>. Jobs posted meanwhile arrive when it ends.\n<code>off</code> switches quiet hours off, /cancel cancels."
    )
}

pub fn ask_report(lang: Lang) -> String {
    lang.pick(
        "Перешлите сюда вакансию, которую бот не прислал, или вставьте её текст (можно со ссылкой). Мы проверим и научим классификатор. /cancel — отмена.",
        "Forward the job the bot missed, or paste its text (a link helps). We will review it and teach the classifier. /cancel cancels.",
    )
    .to_owned()
}

/// A confirmation of a saved setting: `cleared` when it was removed, else `label` and the
/// new value.
fn saved(value: Option<String>, cleared: &str, label: &str) -> String {
    value.map_or_else(|| cleared.to_owned(), |v| format!("{label} {v}"))
}

pub fn include_saved(lang: Lang, list: &[String]) -> String {
    saved(
        (!list.is_empty()).then(|| words(list)),
        lang.pick(
            "✅ Ключевые слова убраны: придут все вакансии ваших категорий.",
            "✅ Keywords cleared: every job of your categories will be sent.",
        ),
        lang.pick("✅ Ключевые слова сохранены:", "✅ Keywords saved:"),
    )
}

pub fn exclude_saved(lang: Lang, list: &[String]) -> String {
    saved(
        (!list.is_empty()).then(|| words(list)),
        lang.pick("✅ Исключения убраны.", "✅ Exclusions cleared."),
        lang.pick("✅ Исключения сохранены:", "✅ Exclusions saved:"),
    )
}

pub fn budget_saved(lang: Lang, b: Option<&MinBudget>) -> String {
    saved(
        b.map(|b| budget(lang, b)),
        lang.pick("✅ Минимальный бюджет убран.", "✅ Minimum budget removed."),
        lang.pick("✅ Минимальный бюджет:", "✅ Minimum budget:"),
    )
}

pub fn quiet_saved(lang: Lang, q: Option<&QuietHoursSpec>) -> String {
    saved(
        q.map(quiet),
        lang.pick("✅ Тихие часы выключены.", "✅ Quiet hours are off."),
        lang.pick("✅ Тихие часы:", "✅ Quiet hours:"),
    )
}

pub fn paused(lang: Lang, paused: bool) -> String {
    if paused {
        lang.pick(
            "⏸ Доставка на паузе. Вакансии не будут приходить, пока вы не нажмёте «Возобновить».",
            "⏸ Delivery paused. No jobs are sent until you press Resume.",
        )
    } else {
        lang.pick("▶️ Доставка возобновлена.", "▶️ Delivery resumed.")
    }
    .to_owned()
}

pub fn report_thanks(lang: Lang, id: i64) -> String {
    tr!(
        lang,
        "🙏 Спасибо! Сообщение №{id} принято, мы его рассмотрим.",
        "🙏 Thank you! Report #{id} is filed; we will review it."
    )
}

/// A report refused because the chat filed `per_hour` reports within the hour.
pub fn report_limited(lang: Lang, per_hour: u32) -> String {
    tr!(
        lang,
        "⏳ Слишком много сообщений: можно не больше {per_hour} в час. Это не сохранено — попробуйте позже.",
        "⏳ Too many reports: at most {per_hour} an hour. This one was not filed; please try again later."
    )
}

pub fn report_needs_text(lang: Lang) -> String {
    lang.pick(
        "В сообщении нет текста. Перешлите вакансию с текстом или вставьте её текст. /cancel — отмена.",
        "That message has no text. Forward the job with its text, or paste the text. /cancel cancels.",
    )
    .to_owned()
}

pub fn cancelled(lang: Lang, was_waiting: bool) -> String {
    if was_waiting {
        lang.pick("Отменено.", "Cancelled.")
    } else {
        lang.pick("Нечего отменять.", "Nothing to cancel.")
    }
    .to_owned()
}

pub fn temporary_error(lang: Lang) -> String {
    lang.pick(
        "⚠️ Временная ошибка. Попробуйте ещё раз через минуту.",
        "⚠️ A temporary error. Please try again in a minute.",
    )
    .to_owned()
}

pub fn unknown_input(lang: Lang) -> String {
    lang.pick(
        "Я понимаю команды и кнопки меню. /start — меню, /help — помощь.",
        "I understand commands and menu buttons. /start opens the menu, /help explains.",
    )
    .to_owned()
}

/// Explains a refused input; the question stays open.
pub fn input_error(lang: Lang, e: &InputError) -> String {
    // The part of the input a reason quotes, cut short and escaped.
    let q = match e {
        InputError::KeywordTooLong { keyword, .. } | InputError::BadKeyword { keyword } => {
            quote(keyword)
        }
        InputError::QuietTime(s) | InputError::QuietZone(s) | InputError::BudgetCurrency(s) => {
            quote(s)
        }
        _ => String::new(),
    };
    let why = match e {
        InputError::Empty => lang
            .pick("Не вижу ни одного слова.", "I see no words there.")
            .to_owned(),
        InputError::TooManyKeywords { given, max } => tr!(
            lang,
            "Слишком много слов: {given}, можно не больше {max}.",
            "Too many words: {given}; at most {max}."
        ),
        InputError::KeywordTooLong { max, .. } => tr!(
            lang,
            "Слишком длинное слово «{q}»: не больше {max} символов.",
            "“{q}” is too long: at most {max} characters."
        ),
        InputError::BadKeyword { .. } => tr!(
            lang,
            "«{q}» не подходит: хэштег пишется слитно (<code>#remote</code>), слово не может быть пустым.",
            "“{q}” cannot be used: a hashtag is one word (<code>#remote</code>), a keyword cannot be empty."
        ),
        InputError::QuietFormat => lang
            .pick(
                "Не понял интервал. Формат: <code>23:00-08:00 Europe/Moscow</code>.",
                "I could not read the window. Format: <code>23:00-08:00 Europe/London</code>.",
            )
            .to_owned(),
        InputError::QuietTime(_) => tr!(
            lang,
            "Время «{q}» не существует: нужно ЧЧ:ММ от 00:00 до 23:59.",
            "“{q}” is not a time of day: use HH:MM from 00:00 to 23:59."
        ),
        InputError::QuietZone(_) => tr!(
            lang,
            "Неизвестный часовой пояс «{q}». Укажите пояс как <code>Europe/Moscow</code>, <code>Asia/Almaty</code> или <code>UTC</code>.",
            "Unknown time zone “{q}”. Use a name such as <code>Europe/London</code>, <code>America/New_York</code> or <code>UTC</code>."
        ),
        InputError::QuietNoZone => lang
            .pick(
                "Укажите часовой пояс: <code>23:00-08:00 Europe/Moscow</code>.",
                "Add your time zone: <code>23:00-08:00 Europe/London</code>.",
            )
            .to_owned(),
        InputError::QuietEmpty => lang
            .pick(
                "Начало и конец совпадают — такой интервал пуст.",
                "Start and end are the same: that window is empty.",
            )
            .to_owned(),
        InputError::BudgetFormat => lang
            .pick(
                "Не понял сумму. Примеры: <code>5000 руб</code>, <code>300 usd</code>, <code>50 $/час</code>.",
                "I could not read the amount. Examples: <code>300 usd</code>, <code>50 $/h</code>, <code>5000 rub</code>.",
            )
            .to_owned(),
        InputError::BudgetCurrency(_) => tr!(
            lang,
            "Не знаю валюту «{q}». Поддерживаются RUB, USD, EUR, GBP, UAH, KZT, USDT.",
            "Unknown currency “{q}”. Supported: RUB, USD, EUR, GBP, UAH, KZT, USDT."
        ),
        InputError::BudgetAmount => lang
            .pick(
                "Сумма должна быть больше нуля и разумной.",
                "The amount must be above zero and sensible.",
            )
            .to_owned(),
    };
    format!(
        "❌ {why}\n{}",
        lang.pick(
            "Попробуйте ещё раз или /cancel для отмены.",
            "Try again, or /cancel."
        )
    )
}
