//! The generic "kind of text" cue features: word lists of genres (an order, a résumé, an
//! advert, a chat message) and a few shape signals (questions, handles, links, lists, length).

use super::features::hash;

/// Generic signals of what kind of text this is. Word lists are deliberately broad (RU + EN)
/// and describe genres (an order, a résumé, an advert, a chat message), not particular posts.
const CUES: &[(&str, &[&str])] = &[
    (
        "money",
        &[
            "$", "€", "₽", "руб", "usd", "usdt", "eur", "грн", "тыс", "k/", "к/",
        ],
    ),
    (
        "rate",
        &[
            "/h",
            "/hr",
            "/час",
            "в час",
            "за час",
            "per hour",
            "an hour",
            "hourly",
            "/мес",
            "в месяц",
            "per month",
            "/month",
            "в день",
            "per day",
            "/day",
            "за штуку",
            "per piece",
            "per video",
            "за ролик",
            "за статью",
            "per article",
            "за 1",
        ],
    ),
    (
        "pay_word",
        &[
            "бюджет",
            "оплата",
            "оплачу",
            "платим",
            "заплачу",
            "гонорар",
            "ставка",
            "зп",
            "зарплат",
            "budget",
            "pay ",
            "paid",
            "payment",
            "rate",
            "fee",
            "compensation",
            "salary",
        ],
    ),
    (
        "contact",
        &[
            "dm",
            "лс",
            "личк",
            "пишите",
            "писать",
            "пиши",
            "write to",
            "message me",
            "contact",
            "apply",
            "откликнуться",
            "отклик",
            "присылайте",
            "send ",
            "резюме на",
        ],
    ),
    (
        "hiring",
        &[
            "нужен",
            "нужна",
            "нужно",
            "нужны",
            "требуется",
            "требуются",
            "ищем",
            "ищу",
            "looking for",
            "need ",
            "needed",
            "needs",
            "hiring",
            "wanted",
            "seeking",
            "в команду",
            "вакансия",
            "задача",
            "задачи",
            "tasks",
            "требования",
            "requirements",
            "заказ",
            "срочно",
            "urgent",
            "asap",
            "кто сделает",
            "кто может",
            "who can",
            "anyone can",
            "can someone",
            "someone to",
            "help me",
            "помочь",
        ],
    ),
    (
        "offering_self",
        &[
            "ищу работу",
            "ищу подработку",
            "ищу заказ",
            "ищу проект",
            "ищу клиент",
            "ищу удал",
            "ищу постоян",
            "возьму",
            "беру заказ",
            "принимаю заказ",
            "сделаю",
            "выполню",
            "могу ",
            "помогу",
            "предлагаю",
            "мои услуги",
            "услуги",
            "for hire",
            "forhire",
            "hire me",
            "available for",
            "open to",
            "open for",
            "looking for work",
            "looking for a job",
            "looking for clients",
            "looking for projects",
            "i offer",
            "my services",
            "i can ",
            "i will",
            "i'll",
            "резюме",
            "resume",
            "cv ",
        ],
    ),
    (
        "first_person",
        &[
            "я ",
            "меня",
            "мой ",
            "мои ",
            "моё",
            "мое ",
            "обо мне",
            "i am",
            "i'm",
            "i've",
            "i have",
            "my ",
            "about me",
        ],
    ),
    (
        "experience",
        &[
            "опыт",
            "experience",
            "years of",
            "лет ",
            "года ",
            "кейс",
            "cases",
            "портфолио",
            "portfolio",
            "примеры работ",
            "samples",
            "dribbble",
            "behance",
            "отзыв",
            "reviews",
        ],
    ),
    (
        "promo",
        &[
            "курс",
            "скидк",
            "промокод",
            "подпис",
            "subscribe",
            "бесплатн",
            "free ",
            "вебинар",
            "webinar",
            "обучени",
            "обучим",
            "course",
            "discount",
            "promo",
            "марафон",
            "интенсив",
            "регистрац",
            "register",
            "sign up",
            "успей",
            "только сегодня",
            "осталось",
            "сертификат",
            "certificate",
            "school",
            "школ",
            "academy",
            "академи",
            "вступай",
            "join",
            "переходи",
            "наш канал",
            "our channel",
            "%",
        ],
    ),
    (
        "easy_money",
        &[
            "без опыта",
            "доход от",
            "заработ",
            "пассивн",
            "с телефона",
            "выплаты",
            "18+",
            "earn",
            "income",
            "passive",
            "from home",
            "на дому",
            "всему обучим",
            "no experience",
        ],
    ),
    (
        "chat",
        &[
            "подскажите",
            "кто-нибудь",
            "кто нибудь",
            "anyone know",
            "does anyone",
            "how do you",
            "как вы",
            "что думаете",
            "thoughts",
            "посоветуйте",
            "recommend",
            "спасибо",
            "thanks",
            "thank you",
            "коллеги",
            "folks",
            "guys",
            "ребята",
            "админ",
        ],
    ),
    (
        "self_work",
        &[
            "делаю",
            "монтирую",
            "записываю",
            "рисую",
            "пишу тексты",
            "пишу статьи",
            "создаю",
            "разрабатываю",
            "настраиваю",
            "верстаю",
            "перевожу",
            "озвучиваю",
            "занимаюсь",
            "работаю с",
            "меня зовут",
            "беру в работу",
            "свободна для",
            "свободен для",
            "открыта к",
            "открыт к",
            "принимаю",
            "#резюме",
            "#ищуработу",
            "i build",
            "i create",
            "i design",
            "i edit",
            "i write",
            "i develop",
            "i make",
            "i help",
            "i do ",
            "i specialize",
            "i work",
            "my name is",
            "available",
            "taking on",
            "accepting new",
            "#forhire",
            "#lookingforwork",
            "open for work",
        ],
    ),
    (
        "channel_meta",
        &[
            "правила",
            "rules",
            "scam",
            "мошен",
            "осторожно",
            "warning",
            "alert",
            "banned",
            "забан",
            "запрещен",
        ],
    ),
    (
        "too_good",
        &[
            "no interview",
            "без собеседования",
            "bank details",
            "date of birth",
            "данные карты",
            "предоплат",
            "вложени",
            "стажировк",
            "стоимость обучения",
            "training provided",
            "ставишь лайки",
        ],
    ),
    (
        "customer_asks",
        &[
            "кто сможет",
            "кто возьмется",
            "сколько возьмете",
            "сколько будет стоить",
            "хочу, чтобы",
            "хочу чтобы",
            "надо ",
            "цену предлагайте",
            "предлагайте цену",
            "ваши цены",
            "your rate",
            "quote",
            "how much would you",
        ],
    ),
];

/// The cue feature keys of a normalized text: one per cue list it matches, then the shape
/// signals and a length bucket.
pub(super) fn cue_features(text: &str) -> Vec<u32> {
    let mut out = Vec::new();
    for (name, needles) in CUES {
        if needles.iter().any(|n| text.contains(n)) {
            out.push(hash(b'q', &[name]));
        }
    }
    let mut flag = |cond: bool, name: &str| {
        if cond {
            out.push(hash(b'q', &[name]));
        }
    };
    flag(text.contains('?'), "question");
    flag(
        text.char_indices().any(|(i, c)| {
            c == '@'
                && text[i + 1..]
                    .chars()
                    .next()
                    .is_some_and(char::is_alphanumeric)
        }),
        "handle",
    );
    flag(text.contains('#'), "hashtag");
    flag(text.contains("://") || text.contains("t.me/"), "url");
    let lines = text.lines().filter(|l| !l.trim().is_empty()).count();
    flag(lines >= 4, "many_lines");
    flag(
        text.lines().any(|l| {
            let l = l.trim_start();
            l.starts_with("- ") || l.starts_with('•') || l.starts_with('—') || l.starts_with('✅')
        }),
        "bullets",
    );
    let len = text.chars().count();
    let bucket = match len {
        0..60 => "len0",
        60..120 => "len1",
        120..250 => "len2",
        250..500 => "len3",
        _ => "len4",
    };
    out.push(hash(b'q', &[bucket]));
    out
}

/// Cues from what the extraction rules of [`jobwire_core::extract`] find in a text: a budget
/// (and whether it is fixed, hourly, monthly, …), a deadline, a contact, a work mode and named
/// skills. They describe what an order states, not how a channel writes it, so they carry to
/// channels the model never saw.
pub(super) fn extracted_cues(text: &str) -> Vec<u32> {
    let x = jobwire_core::extract::extract(text);
    let mut out = Vec::new();
    if let Some(b) = &x.budget {
        out.push(hash(b'x', &["budget"]));
        out.push(hash(b'x', &["budget", b.basis.label()]));
    }
    if x.deadline.is_some() {
        out.push(hash(b'x', &["deadline"]));
    }
    if x.contact.is_some() {
        out.push(hash(b'x', &["contact"]));
    }
    if let Some(m) = x.work_mode {
        out.push(hash(b'x', &["work_mode", m.label()]));
    }
    match x.skills.len() {
        0 => {}
        1 => out.push(hash(b'x', &["skills1"])),
        _ => out.push(hash(b'x', &["skills2"])),
    }
    if x.budget.is_some() && x.contact.is_some() {
        out.push(hash(b'x', &["budget+contact"]));
    }
    out
}
