//! What the main bot says about plans, payments and the subscription's state.

use chrono::{DateTime, Utc};
use jobwire_core::billing::Plan;

use super::format::escape;
use super::lang::Lang;
use super::view::CategoryView;

/// A date as subscribers read it (UTC).
pub fn date(at: DateTime<Utc>) -> String {
    at.format("%d.%m.%Y %H:%M UTC").to_string()
}

fn plan_categories(
    lang: Lang,
    plan_categories: &[jobwire_core::CategorySlug],
    views: &[CategoryView],
) -> String {
    if plan_categories.is_empty() {
        return lang.pick("все категории", "every category").to_owned();
    }
    plan_categories
        .iter()
        .map(|slug| {
            views
                .iter()
                .find(|v| &v.slug == slug)
                .map_or_else(|| escape(slug.as_str()), |v| escape(&v.name))
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// One plan's line: title, price, what it opens and whether it renews.
pub fn plan_line(lang: Lang, plan: &Plan, views: &[CategoryView]) -> String {
    let title = escape(&plan.title);
    let stars = plan.stars;
    let days = plan.days;
    let cats = plan_categories(lang, &plan.categories, views);
    let id = plan.id.as_str();
    if plan.renews() {
        tr!(
            lang,
            "• <b>{title}</b> — {stars} ⭐ каждые 30 дней (продлевается сама, отменить можно в /status); {cats}. /buy {id}",
            "• <b>{title}</b> — {stars} ⭐ every 30 days (renews itself, cancel any time in /status); {cats}. /buy {id}"
        )
    } else {
        tr!(
            lang,
            "• <b>{title}</b> — {stars} ⭐ за {days} дн.; {cats}. /buy {id}",
            "• <b>{title}</b> — {stars} ⭐ for {days} days; {cats}. /buy {id}"
        )
    }
}

/// The plans screen (`/plans`, the menu's button).
pub fn plans_screen(lang: Lang, plans: &[Plan], views: &[CategoryView], state: &str) -> String {
    let lines: Vec<String> = plans.iter().map(|p| plan_line(lang, p, views)).collect();
    let lines = lines.join("\n");
    tr!(
        lang,
        "<b>Подписка</b>\n{state}\n\n<b>Тарифы</b>\n{lines}\n\nОплата — Telegram Stars. /terms — условия, /paysupport — вопросы об оплате.",
        "<b>Subscription</b>\n{state}\n\n<b>Plans</b>\n{lines}\n\nPayment in Telegram Stars. /terms — terms, /paysupport — payment questions."
    )
}

/// The subscription's state in one or two lines (settings, plans screen, /status).
pub fn access_state(
    lang: Lang,
    plans: &[String],
    active_until: Option<DateTime<Utc>>,
    trial: bool,
    renews: bool,
    open: Option<&[jobwire_core::CategorySlug]>,
    views: &[CategoryView],
) -> String {
    let Some(until) = active_until else {
        return lang
            .pick(
                "Подписки нет: вакансии не приходят. Выберите тариф ниже.",
                "No subscription: no vacancies arrive. Pick a plan below.",
            )
            .to_owned();
    };
    let until = date(until);
    let cats = open.map_or_else(
        || lang.pick("все категории", "every category").to_owned(),
        |c| plan_categories(lang, c, views),
    );
    let names = plans
        .iter()
        .map(|p| format!("«{}»", escape(p)))
        .collect::<Vec<_>>()
        .join(", ");
    if trial {
        tr!(
            lang,
            "Пробный период до {until}; {cats}.",
            "Free trial until {until}; {cats}."
        )
    } else if renews {
        tr!(
            lang,
            "Подписка {names} активна; следующее продление {until}; {cats}.",
            "Subscription {names} active; next renewal {until}; {cats}."
        )
    } else {
        tr!(
            lang,
            "Подписка {names} активна до {until}; {cats}.",
            "Subscription {names} active until {until}; {cats}."
        )
    }
}

pub fn trial_started(lang: Lang, days: u32, until: DateTime<Utc>) -> String {
    let until = date(until);
    tr!(
        lang,
        "🎁 Пробный период: {days} дн., до {until}. Все вакансии выбранных категорий — бесплатно.",
        "🎁 Free trial: {days} days, until {until}. Every vacancy of your categories, free."
    )
}

pub fn invoice_description(lang: Lang, plan: &Plan, views: &[CategoryView]) -> String {
    let cats = plan_categories(lang, &plan.categories, views);
    let days = plan.days;
    // Plain text (invoices take no HTML): undo what escape() added.
    let cats = html_escape::decode_html_entities(&cats).into_owned();
    let text = if plan.renews() {
        tr!(
            lang,
            "Вакансии ({cats}) сразу после публикации. Продлевается каждые 30 дней, пока не отмените.",
            "Vacancies ({cats}) as soon as they are posted. Renews every 30 days until cancelled."
        )
    } else {
        tr!(
            lang,
            "Вакансии ({cats}) сразу после публикации, {days} дн.",
            "Vacancies ({cats}) as soon as they are posted, for {days} days."
        )
    };
    text.chars().take(255).collect()
}

pub fn subscription_link(lang: Lang, plan: &Plan) -> String {
    let title = escape(&plan.title);
    let stars = plan.stars;
    tr!(
        lang,
        "Подписка «{title}»: {stars} ⭐ каждые 30 дней. Нажмите кнопку, чтобы оформить.",
        "Subscription “{title}”: {stars} ⭐ every 30 days. Tap the button to subscribe."
    )
}

pub fn pay_button(lang: Lang, plan: &Plan) -> String {
    let stars = plan.stars;
    tr!(lang, "Оплатить {stars} ⭐", "Pay {stars} ⭐")
}

pub fn buy_button(lang: Lang, plan: &Plan) -> String {
    let title = &plan.title;
    let stars = plan.stars;
    tr!(lang, "{title} — {stars} ⭐", "{title} — {stars} ⭐")
}

pub fn card_button(lang: Lang, price: u64, currency: &str) -> String {
    #[allow(clippy::cast_precision_loss)]
    let major = price as f64 / 100.0;
    tr!(
        lang,
        "Картой: {major:.2} {currency}",
        "By card: {major:.2} {currency}"
    )
}

pub fn no_such_plan(lang: Lang, id: &str) -> String {
    let id = escape(id);
    tr!(
        lang,
        "Тарифа «{id}» нет. Список тарифов: /plans",
        "There is no plan “{id}”. The plans: /plans"
    )
}

pub fn billing_off(lang: Lang) -> String {
    lang.pick(
        "Сейчас все вакансии бесплатны: оплачивать нечего.",
        "Every vacancy is free right now: there is nothing to pay for.",
    )
    .to_owned()
}

/// Pre-checkout refusals (plain text: Telegram shows them in the payment form).
pub fn refuse_unknown(lang: Lang) -> String {
    lang.pick(
        "Этот счёт выставлен не нами или устарел. Запросите новый: /plans",
        "This invoice is not ours or is outdated. Ask for a new one: /plans",
    )
    .to_owned()
}

pub fn refuse_paid(lang: Lang) -> String {
    lang.pick(
        "Этот счёт уже оплачен. Новый счёт: /plans",
        "This invoice is already paid. A new one: /plans",
    )
    .to_owned()
}

pub fn refuse_changed(lang: Lang) -> String {
    lang.pick(
        "Цена или тариф изменились. Запросите новый счёт: /plans",
        "The price or the plan changed. Ask for a new invoice: /plans",
    )
    .to_owned()
}

pub fn refuse_busy(lang: Lang) -> String {
    lang.pick(
        "Не удалось проверить счёт. Попробуйте через минуту.",
        "The invoice could not be checked. Please try again in a minute.",
    )
    .to_owned()
}

pub fn payment_received(lang: Lang, plan: &str, until: DateTime<Utc>, renews: bool) -> String {
    let plan = escape(plan);
    let until = date(until);
    if renews {
        tr!(
            lang,
            "✅ Оплата получена: «{plan}». Следующее продление {until}.",
            "✅ Payment received: “{plan}”. Next renewal {until}."
        )
    } else {
        tr!(
            lang,
            "✅ Оплата получена: «{plan}». Доступ до {until}.",
            "✅ Payment received: “{plan}”. Access until {until}."
        )
    }
}

pub fn renewed(lang: Lang, until: DateTime<Utc>) -> String {
    let until = date(until);
    tr!(
        lang,
        "🔁 Подписка продлена до {until}.",
        "🔁 Subscription renewed until {until}."
    )
}

pub fn refunded(lang: Lang, stars: i64, currency: &str) -> String {
    let unit = if currency == jobwire_core::billing::STARS {
        "⭐".to_owned()
    } else {
        escape(currency)
    };
    tr!(
        lang,
        "↩️ Возврат {stars} {unit} оформлен; доступ, купленный этим платежом, закрыт.",
        "↩️ Refund of {stars} {unit} made; the access this payment bought has ended."
    )
}

pub fn renewal_canceled(lang: Lang, until: Option<DateTime<Utc>>) -> String {
    match until {
        Some(until) => {
            let until = date(until);
            tr!(
                lang,
                "Продление отменено. Доступ сохранится до {until}.",
                "Renewal cancelled. Access continues until {until}."
            )
        }
        None => lang
            .pick("Продлевать нечего.", "There is nothing to renew.")
            .to_owned(),
    }
}

pub fn cancel_button(lang: Lang) -> String {
    lang.pick("Отменить продление", "Cancel renewal").to_owned()
}

pub fn plans_button(lang: Lang) -> String {
    lang.pick("💳 Подписка", "💳 Subscription").to_owned()
}

pub fn renew_button(lang: Lang) -> String {
    lang.pick("Продлить подписку", "Renew").to_owned()
}

pub fn reminder(lang: Lang, days: u32, until: DateTime<Utc>) -> String {
    let until = date(until);
    tr!(
        lang,
        "⏳ Подписка заканчивается через {days} дн. ({until}). Продлите, чтобы не пропустить заказы.",
        "⏳ Your subscription ends in {days} day(s) ({until}). Renew so you miss no orders."
    )
}

pub fn expired(lang: Lang, trial: bool) -> String {
    if trial {
        lang.pick(
            "Пробный период закончился: вакансии больше не приходят. Оформите подписку, чтобы продолжить.",
            "Your free trial has ended: vacancies no longer arrive. Subscribe to continue.",
        )
        .to_owned()
    } else {
        lang.pick(
            "Подписка закончилась: вакансии больше не приходят. Продлите её, чтобы продолжить.",
            "Your subscription has ended: vacancies no longer arrive. Renew to continue.",
        )
        .to_owned()
    }
}

pub fn deliveries_line(lang: Lang, today: u64, week: u64) -> String {
    tr!(
        lang,
        "Доставлено сегодня: {today}, за 7 дней: {week}.",
        "Delivered today: {today}, in the last 7 days: {week}."
    )
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use jobwire_core::CategorySlug;
    use jobwire_core::billing::PlanId;

    #[test]
    fn an_invoice_names_categories_as_plain_text() {
        let slug = CategorySlug::parse("design").unwrap();
        let views = [CategoryView {
            slug: slug.clone(),
            name: r#"Design & "UX" <3"#.to_owned(),
            bot: "design".to_owned(),
            bot_username: "design_bot".to_owned(),
            delivered_by_main: false,
            digest: true,
        }];
        let plan = Plan {
            id: PlanId::parse("month").unwrap(),
            title: "Month".to_owned(),
            stars: 100,
            days: 30,
            categories: vec![slug],
            provider_price: None,
        };
        let text = invoice_description(Lang::En, &plan, &views);
        assert!(text.contains(r#"Design & "UX" <3"#), "{text}");
        assert!(
            !text.contains("&amp;") && !text.contains("&quot;"),
            "{text}"
        );
    }
}
