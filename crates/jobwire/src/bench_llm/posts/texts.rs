//! The texts of each kind of post — vacancies, résumés, ads and chatter — made from the
//! words of [`words`](super::words) and the amounts, deadlines and contacts drawn here.

use super::words::{Cat, words};
use jobwire_core::seeded::Seeded;

fn rub_budget(rng: &mut Seeded, cat: &Cat) -> String {
    let (lo, hi) = cat.rub;
    let amount = rng.range(lo / 500, hi / 500) * 500;
    match rng.below(7) {
        0 => format!("Бюджет {} ₽", grouped(amount)),
        1 => format!("Оплата: {}₽ за проект", grouped(amount)),
        2 => format!("бюджет {}к", amount / 1000),
        3 => format!("Оплата до {} руб., обсуждаемо", grouped(amount)),
        4 => format!("Ставка {} ₽/час", rng.range(5, 40) * 100),
        5 => format!(
            "Бюджет {}–{} тыс. ₽",
            amount / 1000,
            amount / 1000 + rng.range(2, 15)
        ),
        _ => format!("💰 {} ₽, 50% предоплата", grouped(amount)),
    }
}

fn usd_budget(rng: &mut Seeded, cat: &Cat) -> String {
    let (lo, hi) = cat.usd;
    let amount = rng.range(lo / 5, hi / 5) * 5;
    match rng.below(6) {
        0 => format!("Budget: ${amount}"),
        1 => format!("Pay: ${}/hr", rng.range(12, 65)),
        2 => format!("${amount} fixed, paid via PayPal"),
        3 => format!("Budget ${amount}-{}", amount + rng.range(1, 20) * 25),
        4 => format!("€{amount} for the whole thing"),
        _ => format!("💵 {amount} USD (USDT ok)"),
    }
}

fn ru_deadline(rng: &mut Seeded) -> String {
    match rng.below(6) {
        0 => format!("Срок — {} дней.", rng.range(2, 21)),
        1 => "Нужно до конца недели.".to_owned(),
        2 => format!("Сдать до {} числа.", rng.range(1, 28)),
        3 => format!(
            "Не горит, срок {}-{} недели.",
            rng.range(1, 2),
            rng.range(3, 4)
        ),
        4 => "Срочно, начать сегодня-завтра!".to_owned(),
        _ => format!(
            "Занятость ~{} ч в неделю, на долгий срок.",
            rng.range(5, 30)
        ),
    }
}

fn en_deadline(rng: &mut Seeded) -> String {
    match rng.below(6) {
        0 => format!("Deadline: {} days.", rng.range(2, 21)),
        1 => "Needed by Friday.".to_owned(),
        2 => "ASAP please.".to_owned(),
        3 => format!("Timeline ~{} weeks.", rng.range(2, 6)),
        4 => format!("About {} hrs/week, ongoing.", rng.range(5, 30)),
        _ => format!("Must be done before the {}th.", rng.range(4, 28)),
    }
}

fn ru_contact(rng: &mut Seeded, handle: &str) -> String {
    match rng.below(7) {
        0 => format!("Пишите в лс {handle}"),
        1 => format!("Отклики: {handle}"),
        2 => format!("Контакт — {handle}, в первом сообщении портфолио"),
        3 => format!("👉 {handle}"),
        4 => format!("Резюме и примеры работ: {handle}"),
        5 => format!(
            "Писать {handle} с пометкой «{}»",
            rng.pick(&words().ru_marks)
        ),
        _ => format!("Связь: {handle} (отвечаю вечером)"),
    }
}

fn en_contact(rng: &mut Seeded, handle: &str) -> String {
    match rng.below(6) {
        0 => format!("DM {handle}"),
        1 => format!("Apply: {handle} with your portfolio"),
        2 => format!("Contact {handle}"),
        3 => format!("👉 {handle}"),
        4 => format!(
            "Send samples to {handle}, put \"{}\" in the first line",
            rng.pick(&words().en_marks)
        ),
        _ => format!("Reach out: {handle} (replies within a day)"),
    }
}

fn pair_of(rng: &mut Seeded, first: usize) -> Option<usize> {
    let cats = &words().cats;
    let slug = &cats[first].slug;
    let partners: Vec<usize> = words()
        .pairs
        .iter()
        .filter_map(|(a, b)| {
            if a == slug {
                Some(b)
            } else if b == slug {
                Some(a)
            } else {
                None
            }
        })
        .filter_map(|s| cats.iter().position(|c| &c.slug == s))
        .collect();
    if partners.is_empty() {
        None
    } else {
        Some(*rng.pick(&partners))
    }
}

pub(super) fn job(
    rng: &mut Seeded,
    russian: bool,
    handle: &str,
    target: usize,
) -> (String, Vec<&'static str>) {
    let wd = words();
    let first = rng.below(wd.cats.len());
    let second = if rng.chance(0.15) {
        pair_of(rng, first)
    } else {
        None
    };
    let cat = &wd.cats[first];
    let other = second.map(|s| &wd.cats[s]);
    let mut categories = vec![cat.slug.as_str()];
    categories.extend(other.map(|o| o.slug.as_str()));
    let (w, biz_pool, filler) = if russian {
        (&wd.ru_job, &wd.ru_biz, &wd.ru_job_filler)
    } else {
        (&wd.en_job, &wd.en_biz, &wd.en_job_filler)
    };
    let (tag, needs, tasks, reqs) = if russian {
        (&cat.ru_tag, &cat.ru_need, &cat.ru_tasks, &cat.ru_reqs)
    } else {
        (&cat.en_tag, &cat.en_need, &cat.en_tasks, &cat.en_reqs)
    };
    let other_tasks = other.map(|o| if russian { &o.ru_tasks } else { &o.en_tasks });
    let biz = rng.pick(biz_pool).as_str();
    let need = rng.pick(needs).as_str();
    let (deadline, budget, contact) = if russian {
        (
            ru_deadline(rng),
            rub_budget(rng, cat),
            ru_contact(rng, handle),
        )
    } else {
        (
            en_deadline(rng),
            usd_budget(rng, cat),
            en_contact(rng, handle),
        )
    };
    let long = target > 550;
    let mut text = rng.pick(&w.openers).replace("{tag}", tag);
    if long && rng.chance(0.7) {
        text.push_str(&w.need_for.replace("{need}", need).replace("{biz}", biz));
        text.push_str(&format!("\n\n{}", w.scope));
        let k = rng.range(2, 4) as usize;
        for t in rng.sample(tasks, k) {
            text.push_str(&format!("\n{} {}", w.bullet, t.replace("{biz}", biz)));
        }
        if let Some(ts) = other_tasks {
            text.push_str(&format!(
                "\n{} {}",
                w.bullet,
                rng.pick(ts).replace("{biz}", biz)
            ));
        }
    } else {
        let task = rng.pick(tasks).replace("{biz}", biz);
        let head = rng.pick(&w.heads);
        text.push_str(
            &head
                .replace("{need}", need)
                .replace("{task}", &task)
                .replace("{biz}", biz),
        );
        if let Some(ts) = other_tasks {
            let task = rng.pick(ts).replace("{biz}", biz);
            text.push(' ');
            text.push_str(&w.also.replace("{task}", &task));
        }
    }
    if long && rng.chance(0.6) {
        let city = rng.pick(&w.cities).as_str();
        let about = rng
            .pick(&w.about)
            .replace("{biz}", biz)
            .replace("{city}", city)
            .replace("{year}", &rng.range(2009, 2024).to_string())
            .replace("{n}", &rng.range(3, 400).to_string());
        text.push_str(&format!("\n\n{about}"));
    }
    if rng.chance(if long { 0.9 } else { 0.5 }) {
        text.push_str(&format!("\n\n{}", w.requirements));
        let k = rng.range(2, 4) as usize;
        for r in rng.sample(reqs, k) {
            text.push_str(&format!("\n{} {r}", w.bullet));
        }
    }
    let tail = format!("\n\n{deadline}\n{budget}\n\n{contact}");
    let room = target.saturating_sub(tail.chars().count());
    if text.chars().count() + 60 < room {
        text.push_str("\n\n");
        let mut paragraph = String::new();
        let have = text.chars().count();
        fill(rng, &mut paragraph, filler, room - have, " ");
        text.push_str(paragraph.trim_start());
    }
    text.push_str(&tail);
    (text, categories)
}

pub(super) fn resume(rng: &mut Seeded, russian: bool, handle: &str, target: usize) -> String {
    let wd = words();
    let cat = rng.pick(&wd.cats);
    let years = rng.range(1, 12);
    let mut text = String::new();
    if russian {
        let name = rng.pick(&wd.ru_names);
        match rng.below(4) {
            0 => text.push_str(&format!("#резюме #{}\n", cat.ru_tag)),
            1 => text.push_str("#ищуработу "),
            2 => text.push_str("Ищу заказы! "),
            _ => {}
        }
        text.push_str(&format!(
            "Меня зовут {name}, я {}, опыт {years} {}. {}.",
            cat.ru_pro,
            ru_years(years),
            rng.pick(&cat.ru_offer)
        ));
        if rng.chance(0.7) {
            text.push_str(&format!(
                " Стоимость работ от {} ₽.",
                grouped(rng.range(cat.rub.0 / 500, cat.rub.1 / 1500 + 2) * 500)
            ));
        }
        if rng.chance(0.5) {
            text.push_str(&format!(
                "\nПортфолио: {}/{}",
                rng.pick(&wd.portfolio_sites),
                &handle[1..]
            ));
        }
        let contact = format!(
            "\n{} {handle}",
            rng.pick(&["Пишите:", "Связь:", "Обращайтесь —", "ЛС:"])
        );
        fill(
            rng,
            &mut text,
            &wd.ru_resume_filler,
            target.saturating_sub(contact.chars().count()),
            " ",
        );
        text.push_str(&contact);
    } else {
        let name = rng.pick(&wd.en_names);
        match rng.below(4) {
            0 => text.push_str("#forhire "),
            1 => text.push_str("#resume #opentowork\n"),
            2 => text.push_str("Available for new projects! "),
            _ => {}
        }
        text.push_str(&format!(
            "Hi, I'm {name}, a {} with {years} years of experience. {}.",
            cat.en_pro,
            rng.pick(&cat.en_offer)
        ));
        if rng.chance(0.7) {
            text.push_str(&format!(
                " Rates from ${}.",
                rng.range(cat.usd.0 / 5, cat.usd.1 / 15 + 2) * 5
            ));
        }
        if rng.chance(0.5) {
            text.push_str(&format!(
                "\nPortfolio: {}/{}",
                rng.pick(&wd.portfolio_sites),
                &handle[1..]
            ));
        }
        let contact = format!(
            "\n{} {handle}",
            rng.pick(&["DM", "Contact:", "Hit me up:", "Telegram:"])
        );
        fill(
            rng,
            &mut text,
            &wd.en_resume_filler,
            target.saturating_sub(contact.chars().count()),
            " ",
        );
        text.push_str(&contact);
    }
    text
}

fn ru_years(n: u64) -> &'static str {
    match (n % 10, n % 100) {
        (1, r) if r != 11 => "год",
        (2..=4, r) if !(12..=14).contains(&r) => "года",
        _ => "лет",
    }
}

pub(super) fn ad(rng: &mut Seeded, russian: bool, handle: &str, target: usize) -> String {
    let wd = words();
    let cat = rng.pick(&wd.cats);
    let mut text = if russian {
        let site = format!("{}-{}.ru", cat.ru_tag, rng.pick(&wd.handle_words));
        match rng.below(5) {
            0 => format!(
                "🔥 Курс «{} с нуля до {}к в месяц» 🔥\n{} дней практики, кураторы, сертификат.\nСтарт {} числа, первые {} мест со скидкой {}%!\nЗапись: {site}/start",
                cat.ru_course,
                rng.range(5, 30) * 10,
                rng.range(5, 60),
                rng.range(1, 28),
                rng.range(10, 100),
                rng.range(2, 9) * 10
            ),
            1 => format!(
                "Подпишись на канал {handle} — {}+ заказов по теме «{}» каждый день, без спама и воды 👍",
                rng.range(2, 20) * 10,
                cat.ru_tag
            ),
            2 => format!(
                "‼️ВАКАНСИЯ‼️\nТребуются сотрудники на удалённую работу 🏠\n💰 Доход от {} ₽ в день\n⏰ {}-{} часа в день с телефона\n✅ Без опыта, всему обучим\n✅ Выплаты ежедневно\nПиши «+» в лс {handle} 👈",
                grouped(rng.range(15, 80) * 100),
                rng.range(1, 2),
                rng.range(3, 4)
            ),
            3 => format!(
                "Бесплатный вебинар: «Как {} и выйти на {}к» 🎓\nВ {} в {}:00 мск. Всем участникам — чек-лист и шаблоны.\nРегистрация: {site}/web",
                rng.pick(&wd.ru_webinar),
                rng.range(5, 30) * 10,
                rng.pick(&wd.ru_weekdays),
                rng.range(11, 21)
            ),
            _ => format!(
                "Продвижение Telegram-каналов 🚀 {} живых подписчиков за {} ₽, гарантия {} дней. Отзывы в профиле, заказ: {handle}",
                grouped(rng.range(5, 100) * 100),
                grouped(rng.range(10, 200) * 100),
                rng.range(7, 60)
            ),
        }
    } else {
        let site = format!("{}{}.io", cat.en_tag, rng.pick(&wd.handle_words));
        match rng.below(5) {
            0 => format!(
                "🚀 {} Masterclass — go from zero to ${}k/month in {} weeks!\nLive sessions, templates, certificate. First {} seats {}% off.\nEnroll: {site}/join",
                cat.en_course,
                rng.range(2, 20),
                rng.range(3, 12),
                rng.range(10, 100),
                rng.range(2, 8) * 10
            ),
            1 => format!(
                "Join {handle} — {}+ fresh {} gigs every day, no spam, no fees 💼",
                rng.range(2, 30) * 10,
                cat.en_tag
            ),
            2 => format!(
                "💸 Earn ${}-{} a day from your phone! No experience, no CV, {} min a day. Limited spots — message {handle} with \"START\" 🔥",
                rng.range(5, 30) * 10,
                rng.range(31, 90) * 10,
                rng.range(15, 90)
            ),
            3 => format!(
                "Free webinar: \"How to {}\" — {} at {} pm EST. Everyone gets our proposal templates.\nSign up: {site}/free",
                rng.pick(&wd.en_webinar),
                rng.pick(&wd.en_weekdays),
                rng.range(1, 9)
            ),
            _ => format!(
                "Selling aged Upwork and Fiverr accounts with {}+ reviews, {} Connects included. Price from ${}, escrow ok. {handle}",
                rng.range(5, 90),
                rng.range(20, 200),
                rng.range(3, 60) * 5
            ),
        }
    };
    let pool = if russian {
        &wd.ru_ad_filler
    } else {
        &wd.en_ad_filler
    };
    fill(rng, &mut text, pool, target, "\n");
    text
}

pub(super) fn chatter(rng: &mut Seeded, russian: bool, handle: &str, target: usize) -> String {
    let wd = words();
    let cat = rng.pick(&wd.cats);
    let mut text = if russian {
        let biz = rng.pick(&wd.ru_biz).as_str();
        let task = rng.pick(&cat.ru_tasks).replace("{biz}", biz);
        match rng.below(6) {
            0 => format!(
                "Подскажите, сколько сейчас стоит {task}? Не заказываю пока, просто прицениваюсь. Видел цены от {} до {} тысяч, разброс огромный",
                rng.range(2, 15),
                rng.range(20, 150)
            ),
            1 => format!(
                "Кто-нибудь работал с {handle}? Взял предоплату {} ₽ за {} и пропал уже на {} дней",
                grouped(rng.range(10, 200) * 100),
                cat.ru_pro_gen,
                rng.range(3, 30)
            ),
            2 => format!(
                "Спасибо {handle} за работу: нужно было {task}, всё сделано за {} дня, рекомендую 👍",
                rng.range(2, 4)
            ),
            3 => format!(
                "Коллеги, как вы сейчас ищете клиентов на {}? За {} месяца ни одного заказа, одни отклики в пустоту",
                cat.ru_tag,
                rng.range(2, 7)
            ),
            4 => format!(
                "Админ, а можно тут публиковать резюме {}? Или только вакансии? Уже {} раз спрашиваю",
                cat.ru_pro_gen,
                rng.range(2, 5)
            ),
            _ => format!(
                "Вопрос к тем, кто {}: какую программу используете? Перешёл на новую версию, всё тормозит, ноутбук {} года",
                cat.ru_doing,
                rng.range(2012, 2022)
            ),
        }
    } else {
        let biz = rng.pick(&wd.en_biz).as_str();
        let task = rng.pick(&cat.en_tasks).replace("{biz}", biz);
        match rng.below(6) {
            0 => format!(
                "Quick question: how much would you charge to {task}? Not hiring yet, just trying to understand the range. Quotes I got go from ${} to ${}",
                rng.range(5, 50) * 10,
                rng.range(60, 400) * 10
            ),
            1 => format!(
                "Has anyone worked with {handle}? Paid a ${} deposit for a {} job and haven't heard back in {} days",
                rng.range(5, 100) * 10,
                cat.en_tag,
                rng.range(3, 30)
            ),
            2 => format!(
                "Shoutout to {handle} — asked them to {task} and it was done in {} days. 10/10 🙌",
                rng.range(1, 9)
            ),
            3 => format!(
                "How are you all finding {} clients these days? {} months on Upwork and {} proposals with zero replies",
                cat.en_tag,
                rng.range(2, 9),
                rng.range(20, 200)
            ),
            4 => format!(
                "Is this legit? Someone DMed me offering ${}/h for {} but they want me to pay ${} for \"training\" first 🤔",
                rng.range(20, 90),
                cat.en_tag,
                rng.range(3, 40) * 5
            ),
            _ => format!(
                "For those who {}: what's your setup? Thinking of upgrading from a {} laptop, budget around ${}",
                cat.en_doing,
                rng.range(2012, 2022),
                rng.range(6, 30) * 100
            ),
        }
    };
    let pool = if russian {
        &wd.ru_chatter_filler
    } else {
        &wd.en_chatter_filler
    };
    fill(rng, &mut text, pool, target, ". ");
    text
}

/// Appends sentences from `pool` (without repeats) until `text` reaches `target` characters.
pub(super) fn fill(rng: &mut Seeded, text: &mut String, pool: &[String], target: usize, sep: &str) {
    for s in rng.sample(pool, pool.len()) {
        if text.chars().count() >= target {
            break;
        }
        text.push_str(sep);
        text.push_str(s);
    }
}

/// A number with its thousands apart (`25 000`), as posts write amounts.
pub(super) fn grouped(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (k, c) in digits.chars().enumerate() {
        if k > 0 && (digits.len() - k).is_multiple_of(3) {
            out.push(' ');
        }
        out.push(c);
    }
    out
}
