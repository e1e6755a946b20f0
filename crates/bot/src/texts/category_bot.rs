//! What the category bots say: subscribed, unsubscribed, help and `/wrong` reports.

use super::format::{escape, quoted};
use super::lang::Lang;

pub fn category_started(lang: Lang, names: &[String], main_username: Option<&str>) -> String {
    let list = quoted(names);
    let settings = lives_in(
        lang,
        main_username,
        "Фильтры, тихие часы и пауза",
        "Filters, quiet hours and pause",
    );
    tr!(
        lang,
        "✅ Подписка включена: {list}. Новые вакансии будут приходить сюда.{settings}\n\n/stop — отписаться. Кнопки под вакансией: «Не вакансия», «Не та категория», «Скрыть автора».",
        "✅ Subscribed: {list}. New jobs will arrive here.{settings}\n\n/stop unsubscribes. The buttons under a job: Not a vacancy, Wrong category, Hide this author."
    )
}

pub fn category_stopped(lang: Lang, names: &[String]) -> String {
    let list = quoted(names);
    tr!(
        lang,
        "🔕 Подписка выключена: {list}. /start — включить снова.",
        "🔕 Unsubscribed: {list}. /start subscribes again."
    )
}

pub fn category_help(lang: Lang, names: &[String], main_username: Option<&str>) -> String {
    let list = quoted(names);
    let settings = lives_in(lang, main_username, "Настройки", "Settings");
    tr!(
        lang,
        "Этот бот присылает вакансии категорий {list}.\n/start — подписаться, /stop — отписаться.\nКнопки под вакансией: «Не вакансия», «Не та категория» (жалоба администратору), «Скрыть автора» (его вакансии больше не придут; вернуть — в /status главного бота). Или ответьте /wrong на сообщение с комментарием.{settings}",
        "This bot sends jobs of {list}.\n/start subscribes, /stop unsubscribes.\nThe buttons under a job: Not a vacancy, Wrong category (a report to the admins), Hide this author (you will not get their posts again; /status in the main bot shows them again). Or reply /wrong to a message with a comment.{settings}"
    )
}

/// `\n{what} live in @main.`: where the settings are (nothing without a main bot).
fn lives_in(lang: Lang, main_username: Option<&str>, what_ru: &str, what_en: &str) -> String {
    main_username.map_or_else(String::new, |m| {
        let m = escape(m);
        tr!(lang, "\n{what_ru} — в @{m}.", "\n{what_en} live in @{m}.")
    })
}

pub fn wrong_needs_reply(lang: Lang) -> String {
    lang.pick(
        "Ответьте командой /wrong на сообщение с вакансией, которая оказалась не вакансией или не той категории.",
        "Reply /wrong to the message with the job that is not a job or not of this category.",
    )
    .to_owned()
}

pub fn wrong_thanks(lang: Lang, id: i64) -> String {
    tr!(
        lang,
        "🙏 Спасибо! Жалоба №{id} принята — такие сообщения будут реже.",
        "🙏 Thank you! Report #{id} is filed — you will see fewer of these."
    )
}
