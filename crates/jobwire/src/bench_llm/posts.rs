//! Synthetic channel posts for `jobwire bench llm`: a deterministic, labeled mix of vacancies
//! in the twelve standard categories, résumés, ads and chatter, in Russian and English, 100 to
//! 1,500 characters long, in the style of `data/dev.jsonl` but written from templates of their
//! own (the local model never saw them).
//!
//! Every post is made distinct: its own contact, its own amounts, its own business and task
//! mix; and each generated post is checked against the near-duplicate detector the intake
//! runs ([`DuplicateIndex`]), drawn again when the detector would take it for an earlier one.

use chrono::{DateTime, Utc};
use jobwire_core::dedup::{DedupConfig, DuplicateIndex, fingerprint};
use jobwire_testkit::llm::OracleEntry;

/// Post kinds as the labeled JSONL names them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Job,
    Resume,
    Ad,
    Chatter,
}

impl Kind {
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Job => "job",
            Kind::Resume => "resume",
            Kind::Ad => "ad",
            Kind::Chatter => "chatter",
        }
    }
}

/// One generated post with its true labels.
#[derive(Debug, Clone)]
pub struct BenchPost {
    pub channel: &'static str,
    pub text: String,
    pub kind: Kind,
    /// Category slugs (jobs only).
    pub categories: Vec<&'static str>,
    pub russian: bool,
}

impl BenchPost {
    pub fn is_job(&self) -> bool {
        self.kind == Kind::Job
    }

    /// The fake LLM's answer for this post.
    pub fn oracle_entry(&self) -> OracleEntry {
        OracleEntry {
            text: self.text.clone(),
            is_job: self.is_job(),
            kind: self.kind.as_str().to_owned(),
            categories: self.categories.iter().map(|c| (*c).to_owned()).collect(),
        }
    }
}

/// What [`generate`] made.
#[derive(Debug, Clone)]
pub struct Generated {
    pub posts: Vec<BenchPost>,
    /// Posts the duplicate detector still took for an earlier one after every redraw (kept
    /// anyway; the intake will drop them).
    pub near_duplicates: usize,
    /// Redraws needed to keep posts apart.
    pub redraws: usize,
}

/// SplitMix64: small, fast and deterministic; enough for text generation.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number in `0..n` (0 when `n` is 0).
    pub fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next_u64() % n as u64) as usize
        }
    }

    /// A number in `lo..=hi`.
    pub fn range(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.next_u64() % (hi.saturating_sub(lo) + 1)
    }

    pub fn chance(&mut self, p: f64) -> bool {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64 <= p
    }

    pub fn pick<'a, T>(&mut self, xs: &'a [T]) -> &'a T {
        &xs[self.below(xs.len())]
    }

    /// `k` distinct elements of `xs` (all of them when `k >= xs.len()`), in random order.
    pub fn sample<'a, T>(&mut self, xs: &'a [T], k: usize) -> Vec<&'a T> {
        let mut idx: Vec<usize> = (0..xs.len()).collect();
        for i in (1..idx.len()).rev() {
            let j = self.below(i + 1);
            idx.swap(i, j);
        }
        idx.into_iter().take(k).map(|i| &xs[i]).collect()
    }
}

/// Generates `n` distinct labeled posts from `seed`: about 45% vacancies, 20% résumés, 17%
/// ads and 18% chatter, 60% in Russian.
pub fn generate(n: usize, seed: u64) -> Generated {
    let mut rng = Rng::new(seed);
    let mut index = DuplicateIndex::new(DedupConfig::default());
    let now: DateTime<Utc> = Utc::now();
    let mut posts = Vec::with_capacity(n);
    let mut near_duplicates = 0;
    let mut redraws = 0;
    for i in 0..n {
        let roll = rng.below(100);
        let kind = match roll {
            0..45 => Kind::Job,
            45..65 => Kind::Resume,
            65..82 => Kind::Ad,
            _ => Kind::Chatter,
        };
        let russian = rng.chance(0.6);
        let mut attempt = 0;
        loop {
            let post = make(&mut rng, i, attempt, kind, russian);
            let fp = fingerprint(&post.text);
            let duplicate = index.find(&fp, now).is_some();
            if !duplicate || attempt >= 30 {
                near_duplicates += usize::from(duplicate);
                index.insert(i as i64, now, fp);
                posts.push(post);
                break;
            }
            attempt += 1;
            redraws += 1;
        }
    }
    Generated {
        posts,
        near_duplicates,
        redraws,
    }
}

fn make(rng: &mut Rng, i: usize, attempt: usize, kind: Kind, russian: bool) -> BenchPost {
    // The contact is unique per post (and per redraw): the post's own poster.
    let handle = handle(rng, i, attempt);
    let target = target_length(rng, kind);
    let (text, categories) = match kind {
        Kind::Job => job(rng, russian, &handle, target),
        Kind::Resume => (resume(rng, russian, &handle, target), Vec::new()),
        Kind::Ad => (ad(rng, russian, &handle, target), Vec::new()),
        Kind::Chatter => (chatter(rng, russian, &handle, target), Vec::new()),
    };
    let channel = if russian {
        *rng.pick(&RU_CHANNELS)
    } else {
        *rng.pick(&EN_CHANNELS)
    };
    BenchPost {
        channel,
        text: bound(text),
        kind,
        categories,
        russian,
    }
}

/// At most 1,500 characters, cut at a line or sentence end where possible.
fn bound(text: String) -> String {
    const MAX: usize = 1500;
    if text.chars().count() <= MAX {
        return text;
    }
    let cut: String = text.chars().take(MAX).collect();
    let end = cut
        .rfind('\n')
        .or_else(|| cut.rfind(". "))
        .unwrap_or(cut.len());
    cut[..end].trim_end().to_owned()
}

/// How long a post should get: short, medium or long, by kind (chatter is short).
fn target_length(rng: &mut Rng, kind: Kind) -> usize {
    let roll = rng.below(100);
    let (lo, hi) = match (kind, roll) {
        (Kind::Chatter, 0..70) => (100, 220),
        (Kind::Chatter, _) => (220, 450),
        (_, 0..30) => (110, 300),
        (_, 30..78) => (300, 700),
        _ => (700, 1450),
    };
    rng.range(lo, hi) as usize
}

fn handle(rng: &mut Rng, i: usize, attempt: usize) -> String {
    let name = rng.pick(&HANDLE_NAMES);
    let word = rng.pick(&HANDLE_WORDS);
    match rng.below(3) {
        0 => format!("@{name}_{word}{}", i * 7 + attempt),
        1 => format!("@{word}_{name}_{}", i + 31 * attempt),
        _ => format!("@{name}{}{word}", (i * 13 + attempt * 5) % 9973),
    }
}

/// Appends sentences from `pool` (without repeats) until `text` reaches `target` characters.
fn fill(rng: &mut Rng, text: &mut String, pool: &[&str], target: usize, sep: &str) {
    for s in rng.sample(pool, pool.len()) {
        if text.chars().count() >= target {
            break;
        }
        text.push_str(sep);
        text.push_str(s);
    }
}

/// A number with its thousands apart (`25 000`), as posts write amounts.
fn grouped(n: u64) -> String {
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

fn rub_budget(rng: &mut Rng, cat: &Cat) -> String {
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

fn usd_budget(rng: &mut Rng, cat: &Cat) -> String {
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

fn ru_deadline(rng: &mut Rng) -> String {
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

fn en_deadline(rng: &mut Rng) -> String {
    match rng.below(6) {
        0 => format!("Deadline: {} days.", rng.range(2, 21)),
        1 => "Needed by Friday.".to_owned(),
        2 => "ASAP please.".to_owned(),
        3 => format!("Timeline ~{} weeks.", rng.range(2, 6)),
        4 => format!("About {} hrs/week, ongoing.", rng.range(5, 30)),
        _ => format!("Must be done before the {}th.", rng.range(4, 28)),
    }
}

fn ru_contact(rng: &mut Rng, handle: &str) -> String {
    match rng.below(7) {
        0 => format!("Пишите в лс {handle}"),
        1 => format!("Отклики: {handle}"),
        2 => format!("Контакт — {handle}, в первом сообщении портфолио"),
        3 => format!("👉 {handle}"),
        4 => format!("Резюме и примеры работ: {handle}"),
        5 => format!("Писать {handle} с пометкой «{}»", rng.pick(&RU_MARKS)),
        _ => format!("Связь: {handle} (отвечаю вечером)"),
    }
}

fn en_contact(rng: &mut Rng, handle: &str) -> String {
    match rng.below(6) {
        0 => format!("DM {handle}"),
        1 => format!("Apply: {handle} with your portfolio"),
        2 => format!("Contact {handle}"),
        3 => format!("👉 {handle}"),
        4 => format!(
            "Send samples to {handle}, put \"{}\" in the first line",
            rng.pick(&EN_MARKS)
        ),
        _ => format!("Reach out: {handle} (replies within a day)"),
    }
}

fn pair_of(rng: &mut Rng, first: usize) -> Option<usize> {
    let slug = CATS[first].slug;
    let partners: Vec<usize> = PAIRS
        .iter()
        .filter_map(|(a, b)| {
            if *a == slug {
                Some(*b)
            } else if *b == slug {
                Some(*a)
            } else {
                None
            }
        })
        .filter_map(|s| CATS.iter().position(|c| c.slug == s))
        .collect();
    if partners.is_empty() {
        None
    } else {
        Some(*rng.pick(&partners))
    }
}

/// The words of a vacancy in one language.
struct JobWords {
    biz: &'static [&'static str],
    /// Openers; `{tag}` is the category's hashtag.
    openers: &'static [&'static str],
    /// One-line forms of the head: `{need}`, `{task}`, `{biz}`.
    heads: &'static [&'static str],
    /// The head of a long post, before its list of tasks.
    need_for: &'static str,
    scope: &'static str,
    also: &'static str,
    requirements: &'static str,
    bullet: &'static str,
    about: &'static [&'static str],
    cities: &'static [&'static str],
    filler: &'static [&'static str],
}

const RU_JOB: JobWords = JobWords {
    biz: &RU_BIZ,
    openers: &[
        "#вакансия #{tag} #удаленка\n",
        "📌 ",
        "Всем привет! ",
        "#{tag} #заказ\n",
        "",
        "",
        "🔥 Срочно! ",
        "#ищу #{tag}\n",
    ],
    heads: &[
        "{need}. Задача: {task}.",
        "{need} — {task}.",
        "{need} для {biz}.\nНужно {task}.",
        "{need}: {task}.",
    ],
    need_for: "{need} для {biz}.",
    scope: "Что нужно сделать:",
    also: "Также нужно {task}.",
    requirements: "Требования:",
    bullet: "•",
    about: &[
        "Немного о нас: мы — команда {biz} из города {city}, работаем с {year} года, в штате {n} человек.",
        "Проект для {biz} (город {city}): запускаемся в этом сезоне, в листе ожидания уже {n} клиентов.",
        "Мы — владельцы {biz}, город {city}. На рынке с {year} года, сейчас {n} постоянных клиентов в месяц.",
    ],
    cities: &[
        "Москва",
        "Казань",
        "Екатеринбург",
        "Новосибирск",
        "Краснодар",
        "Тбилиси",
        "Алматы",
        "Минск",
        "Санкт-Петербург",
        "Сочи",
        "Нижний Новгород",
        "Пермь",
    ],
    filler: &RU_JOB_FILLER,
};

const EN_JOB: JobWords = JobWords {
    biz: &EN_BIZ,
    openers: &[
        "#hiring #{tag} #remote\n",
        "[HIRING] ",
        "Hey all! ",
        "📌 ",
        "",
        "",
        "🚨 Urgent: ",
        "#gig #{tag}\n",
    ],
    heads: &[
        "{need}. Task: {task}.",
        "{need} to {task}.",
        "{need} for {biz}.\nWe need to {task}.",
        "{need}: {task}.",
    ],
    need_for: "{need} for {biz}.",
    scope: "Scope:",
    also: "We'd also like someone to {task}.",
    requirements: "Requirements:",
    bullet: "-",
    about: &[
        "A bit about us: we're {biz} based in {city}, around since {year}, {n} people on the team.",
        "Context: {biz} in {city} opening a new location, {n} customers already on the waitlist.",
        "We run {biz} in {city} (since {year}) and serve about {n} clients a month.",
    ],
    cities: &[
        "Austin",
        "Berlin",
        "Lisbon",
        "Toronto",
        "Sydney",
        "Dubai",
        "Warsaw",
        "Manchester",
        "Denver",
        "Cape Town",
        "Singapore",
        "Tallinn",
    ],
    filler: &EN_JOB_FILLER,
};

fn job(rng: &mut Rng, russian: bool, handle: &str, target: usize) -> (String, Vec<&'static str>) {
    let first = rng.below(CATS.len());
    let second = if rng.chance(0.15) {
        pair_of(rng, first)
    } else {
        None
    };
    let cat = &CATS[first];
    let other = second.map(|s| &CATS[s]);
    let mut categories = vec![cat.slug];
    categories.extend(other.map(|o| o.slug));
    let w = if russian { &RU_JOB } else { &EN_JOB };
    let (tag, needs, tasks, reqs) = if russian {
        (cat.ru_tag, cat.ru_need, cat.ru_tasks, cat.ru_reqs)
    } else {
        (cat.en_tag, cat.en_need, cat.en_tasks, cat.en_reqs)
    };
    let other_tasks = other.map(|o| if russian { o.ru_tasks } else { o.en_tasks });
    let biz = *rng.pick(w.biz);
    let need = *rng.pick(needs);
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
    let mut text = rng.pick(w.openers).replace("{tag}", tag);
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
        let head = rng.pick(w.heads);
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
        let city = *rng.pick(w.cities);
        let about = rng
            .pick(w.about)
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
        fill(rng, &mut paragraph, w.filler, room - have, " ");
        text.push_str(paragraph.trim_start());
    }
    text.push_str(&tail);
    (text, categories)
}

fn resume(rng: &mut Rng, russian: bool, handle: &str, target: usize) -> String {
    let cat = rng.pick(&CATS);
    let years = rng.range(1, 12);
    let mut text = String::new();
    if russian {
        let name = rng.pick(&RU_NAMES);
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
            rng.pick(cat.ru_offer)
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
                rng.pick(&PORTFOLIO_SITES),
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
            &RU_RESUME_FILLER,
            target.saturating_sub(contact.chars().count()),
            " ",
        );
        text.push_str(&contact);
    } else {
        let name = rng.pick(&EN_NAMES);
        match rng.below(4) {
            0 => text.push_str("#forhire "),
            1 => text.push_str("#resume #opentowork\n"),
            2 => text.push_str("Available for new projects! "),
            _ => {}
        }
        text.push_str(&format!(
            "Hi, I'm {name}, a {} with {years} years of experience. {}.",
            cat.en_pro,
            rng.pick(cat.en_offer)
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
                rng.pick(&PORTFOLIO_SITES),
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
            &EN_RESUME_FILLER,
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

fn ad(rng: &mut Rng, russian: bool, handle: &str, target: usize) -> String {
    let cat = rng.pick(&CATS);
    let mut text = if russian {
        let site = format!("{}-{}.ru", cat.ru_tag, rng.pick(&HANDLE_WORDS));
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
                rng.pick(&RU_WEBINAR),
                rng.range(5, 30) * 10,
                rng.pick(&RU_WEEKDAYS),
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
        let site = format!("{}{}.io", cat.en_tag, rng.pick(&HANDLE_WORDS));
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
                rng.pick(&EN_WEBINAR),
                rng.pick(&EN_WEEKDAYS),
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
    let pool: &[&str] = if russian {
        &RU_AD_FILLER
    } else {
        &EN_AD_FILLER
    };
    fill(rng, &mut text, pool, target, "\n");
    text
}

fn chatter(rng: &mut Rng, russian: bool, handle: &str, target: usize) -> String {
    let cat = rng.pick(&CATS);
    let mut text = if russian {
        let biz = *rng.pick(&RU_BIZ);
        let task = rng.pick(cat.ru_tasks).replace("{biz}", biz);
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
        let biz = *rng.pick(&EN_BIZ);
        let task = rng.pick(cat.en_tasks).replace("{biz}", biz);
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
    let pool: &[&str] = if russian {
        &RU_CHATTER_FILLER
    } else {
        &EN_CHATTER_FILLER
    };
    fill(rng, &mut text, pool, target, ". ");
    text
}

/// What the generator knows about one category.
struct Cat {
    slug: &'static str,
    ru_tag: &'static str,
    en_tag: &'static str,
    ru_need: &'static [&'static str],
    ru_tasks: &'static [&'static str],
    ru_reqs: &'static [&'static str],
    en_need: &'static [&'static str],
    en_tasks: &'static [&'static str],
    en_reqs: &'static [&'static str],
    /// Résumés: the profession and what they offer.
    ru_pro: &'static str,
    /// The profession in the genitive ("для дизайнера").
    ru_pro_gen: &'static str,
    ru_offer: &'static [&'static str],
    en_pro: &'static str,
    en_offer: &'static [&'static str],
    /// Chatter: "those who …".
    ru_doing: &'static str,
    en_doing: &'static str,
    /// Ads: what a course teaches.
    ru_course: &'static str,
    en_course: &'static str,
    /// Typical project budgets, roubles and dollars.
    rub: (u64, u64),
    usd: (u64, u64),
}

/// Categories a vacancy plausibly asks for together.
const PAIRS: [(&str, &str); 10] = [
    ("web", "design"),
    ("mobile", "design"),
    ("video", "marketing"),
    ("texts", "marketing"),
    ("bots", "ai"),
    ("data", "assistant"),
    ("audio", "video"),
    ("translation", "texts"),
    ("ai", "design"),
    ("web", "marketing"),
];

const CATS: [Cat; 12] = [
    Cat {
        slug: "web",
        ru_tag: "сайты",
        en_tag: "webdev",
        ru_need: &[
            "Нужен веб-разработчик",
            "Ищем верстальщика",
            "Требуется специалист по Tilda",
            "Нужен фронтенд-разработчик",
            "Ищу разработчика на WordPress",
        ],
        ru_tasks: &[
            "сверстать лендинг по готовому макету в Figma",
            "собрать сайт на Tilda для {biz}",
            "доработать сайт на WordPress: ускорить загрузку и починить форму заявки",
            "перенести интернет-магазин на Bitrix на новый хостинг",
            "сделать адаптивную мобильную версию сайта {biz}",
            "подключить оплату ЮKassa и amoCRM к сайту",
            "написать бэкенд на Django для личного кабинета клиентов",
        ],
        ru_reqs: &[
            "опыт адаптивной вёрстки от 2 лет",
            "HTML/CSS/JS на уверенном уровне",
            "портфолио с живыми сайтами",
            "умение работать с Zero-блоками",
            "опыт с PHP и MySQL",
            "понимание основ SEO",
        ],
        en_need: &[
            "Looking for a web developer",
            "Need a frontend dev",
            "Hiring a WordPress developer",
            "Need someone experienced with Webflow",
            "Looking for a full-stack freelancer",
        ],
        en_tasks: &[
            "build a landing page in Webflow for {biz}",
            "fix a broken WooCommerce checkout",
            "turn a Figma design into a responsive Next.js site",
            "speed up a slow WordPress site (PageSpeed is under 40)",
            "add Stripe payments and a members area to an existing site",
            "migrate a Shopify theme and fix the layout bugs",
        ],
        en_reqs: &[
            "solid HTML/CSS/JS",
            "links to live sites you built",
            "experience with Next.js or Astro",
            "good written English",
            "can start this week",
        ],
        ru_pro: "веб-разработчик",
        ru_pro_gen: "веб-разработчика",
        ru_offer: &[
            "Делаю сайты на Tilda и WordPress под ключ",
            "Сверстаю лендинг по макету за 2-3 дня",
            "Пишу бэкенд на Python/Django, настраиваю серверы",
        ],
        en_pro: "web developer",
        en_offer: &[
            "I build fast sites on Webflow, WordPress and Next.js",
            "Landing pages from your Figma in 48 hours",
            "Full-stack: React, Node, Postgres, deployments included",
        ],
        ru_doing: "верстает сайты",
        en_doing: "build websites",
        ru_course: "Веб-разработка",
        en_course: "Web Development",
        rub: (8_000, 150_000),
        usd: (150, 3_000),
    },
    Cat {
        slug: "bots",
        ru_tag: "боты",
        en_tag: "bots",
        ru_need: &[
            "Нужен разработчик телеграм-ботов",
            "Ищем питониста для бота",
            "Требуется специалист по автоматизации",
            "Нужен программист на Python",
        ],
        ru_tasks: &[
            "сделать бота для записи клиентов {biz} с напоминаниями",
            "написать парсер объявлений с Авито с выгрузкой в Google Таблицы",
            "сделать бот-магазин с оплатой прямо в Telegram",
            "связать amoCRM с формой на сайте через Make",
            "написать скрипт, который пересылает сообщения из чатов по ключевым словам",
            "сделать мини-приложение в Telegram для программы лояльности",
        ],
        ru_reqs: &[
            "aiogram или python-telegram-bot",
            "опыт с API маркетплейсов",
            "умение деплоить на VPS",
            "готовые боты в портфолио",
            "знание PostgreSQL",
        ],
        en_need: &[
            "Need a Telegram bot developer",
            "Looking for a Python automation dev",
            "Hiring someone for a Discord bot",
            "Need a scraping expert",
        ],
        en_tasks: &[
            "build a Telegram bot for {biz} that takes bookings and sends reminders",
            "make a Discord bot with wallet verification and roles",
            "write a scraper that puts Amazon prices into a Google Sheet daily",
            "connect Typeform, Notion and Slack with Make or Zapier",
            "build a WhatsApp bot that answers order status questions",
        ],
        en_reqs: &[
            "Python or Node.js",
            "examples of bots you shipped",
            "experience with rate-limited APIs",
            "can host it on our VPS",
        ],
        ru_pro: "разработчик ботов",
        ru_pro_gen: "разработчика бота",
        ru_offer: &[
            "Пишу телеграм-боты любой сложности, парсеры, интеграции",
            "Автоматизирую рутину: скрипты, боты, выгрузки в таблицы",
        ],
        en_pro: "bot developer",
        en_offer: &[
            "I build Telegram and Discord bots, scrapers and automations",
            "Python automation: bots, scrapers, API integrations",
        ],
        ru_doing: "пишет ботов",
        en_doing: "build bots",
        ru_course: "Телеграм-боты",
        en_course: "Bot Building",
        rub: (5_000, 90_000),
        usd: (100, 2_000),
    },
    Cat {
        slug: "mobile",
        ru_tag: "мобильнаяразработка",
        en_tag: "mobiledev",
        ru_need: &[
            "Нужен Flutter-разработчик",
            "Ищем iOS-разработчика",
            "Требуется Android-разработчик",
            "Нужен разработчик мобильных приложений",
        ],
        ru_tasks: &[
            "доработать приложение на Flutter: push-уведомления и оплата",
            "исправить падения Android-приложения после обновления",
            "собрать MVP приложения для {biz} под iOS и Android",
            "опубликовать приложение в App Store и Google Play",
            "добавить подписки через RevenueCat в iOS-приложение",
        ],
        ru_reqs: &[
            "Swift/SwiftUI или Kotlin",
            "опыт публикации в сторах",
            "2+ приложения в портфолио",
            "Firebase",
        ],
        en_need: &[
            "Looking for a React Native developer",
            "Need an iOS dev (SwiftUI)",
            "Hiring a Flutter freelancer",
            "Need an Android developer",
        ],
        en_tasks: &[
            "add in-app subscriptions and a paywall to our iOS app",
            "build an MVP mobile app for {biz}",
            "fix crashes in a Kotlin app after the latest SDK update",
            "publish our Flutter app to both stores",
            "add offline mode and push notifications to a React Native app",
        ],
        en_reqs: &[
            "apps live in the App Store / Play Store",
            "Firebase experience",
            "clean, documented code",
            "overlap with EU hours",
        ],
        ru_pro: "мобильный разработчик",
        ru_pro_gen: "мобильного разработчика",
        ru_offer: &[
            "Разрабатываю приложения на Flutter под iOS и Android",
            "Нативная разработка под iOS, 6 приложений в сторах",
        ],
        en_pro: "mobile developer",
        en_offer: &[
            "I ship Flutter and React Native apps end to end",
            "Native iOS (Swift) with 8 apps in the App Store",
        ],
        ru_doing: "делает мобильные приложения",
        en_doing: "do mobile dev",
        ru_course: "Мобильная разработка",
        en_course: "Flutter",
        rub: (30_000, 300_000),
        usd: (500, 8_000),
    },
    Cat {
        slug: "design",
        ru_tag: "дизайн",
        en_tag: "design",
        ru_need: &[
            "Нужен дизайнер",
            "Ищем графического дизайнера",
            "Требуется UI/UX дизайнер",
            "Ищу дизайнера карточек для маркетплейсов",
        ],
        ru_tasks: &[
            "разработать логотип и фирменный стиль для {biz}",
            "нарисовать карточки товаров для Wildberries, 10 штук",
            "сделать дизайн лендинга в Figma",
            "оформить презентацию для инвесторов на 15 слайдов",
            "подготовить баннеры для рекламы ВКонтакте",
            "нарисовать иллюстрации для детской книги",
        ],
        ru_reqs: &[
            "уверенное владение Figma",
            "портфолио на Behance",
            "насмотренность и чувство стиля",
            "умение работать с правками",
            "Photoshop и Illustrator",
        ],
        en_need: &[
            "Looking for a graphic designer",
            "Need a UI/UX designer",
            "Hiring an illustrator",
            "Need a designer",
        ],
        en_tasks: &[
            "create a logo and brand kit for {biz}",
            "design 12 app screens in Figma",
            "redesign our pitch deck (20 slides)",
            "make Amazon listing images for 5 products",
            "draw illustrations for a children's book",
        ],
        en_reqs: &[
            "strong Figma skills",
            "a portfolio on Dribbble or Behance",
            "fast turnaround on revisions",
            "experience with brand guidelines",
        ],
        ru_pro: "графический дизайнер",
        ru_pro_gen: "дизайнера",
        ru_offer: &[
            "Рисую логотипы, фирменный стиль, карточки для маркетплейсов",
            "UI/UX дизайн сайтов и приложений в Figma",
        ],
        en_pro: "graphic designer",
        en_offer: &[
            "Logos, brand kits and social media templates",
            "UI/UX for web and mobile, Figma prototypes",
        ],
        ru_doing: "занимается дизайном",
        en_doing: "do design",
        ru_course: "Графический дизайн",
        en_course: "UI/UX Design",
        rub: (3_000, 80_000),
        usd: (80, 2_500),
    },
    Cat {
        slug: "video",
        ru_tag: "монтаж",
        en_tag: "videoediting",
        ru_need: &[
            "Нужен монтажёр",
            "Ищем видеомонтажёра",
            "Требуется моушн-дизайнер",
            "Нужен человек на монтаж Reels",
        ],
        ru_tasks: &[
            "монтировать ролики для YouTube-канала, 2 видео в неделю",
            "сделать 8 Reels в месяц для {biz}",
            "сделать анимированную заставку для канала",
            "добавить субтитры и цветокоррекцию к интервью",
            "смонтировать промо-ролик для {biz} из отснятого материала",
        ],
        ru_reqs: &[
            "Premiere Pro или DaVinci Resolve",
            "After Effects",
            "чувство ритма",
            "примеры вертикальных роликов",
        ],
        en_need: &[
            "Looking for a video editor",
            "Need a TikTok/Reels editor",
            "Hiring a motion designer",
            "Need a YouTube editor",
        ],
        en_tasks: &[
            "edit long-form YouTube videos, 2 per week",
            "cut 10 short-form clips a month for {biz}",
            "make a motion graphics intro for our channel",
            "edit UGC ads for {biz}",
        ],
        en_reqs: &[
            "Premiere Pro or DaVinci",
            "examples of retention-focused edits",
            "After Effects is a plus",
            "24-48h turnaround",
        ],
        ru_pro: "видеомонтажёр",
        ru_pro_gen: "монтажёра",
        ru_offer: &[
            "Монтирую Reels, Shorts и ролики для YouTube",
            "Моушн-дизайн, заставки, анимация логотипов",
        ],
        en_pro: "video editor",
        en_offer: &[
            "YouTube long-form, TikTok and Reels edits",
            "Motion graphics and ad creatives",
        ],
        ru_doing: "монтирует видео",
        en_doing: "edit video",
        ru_course: "Монтаж Reels",
        en_course: "Video Editing",
        rub: (2_000, 70_000),
        usd: (50, 2_000),
    },
    Cat {
        slug: "texts",
        ru_tag: "копирайтинг",
        en_tag: "copywriting",
        ru_need: &[
            "Нужен копирайтер",
            "Ищем автора статей",
            "Требуется редактор",
            "Нужен сценарист",
        ],
        ru_tasks: &[
            "написать статьи для блога {biz}, 4 в месяц",
            "написать тексты для лендинга {biz}",
            "написать описания товаров для маркетплейса, 50 штук",
            "писать сценарии для коротких видео",
            "сделать редактуру и корректуру книги на 200 страниц",
        ],
        ru_reqs: &[
            "грамотность",
            "примеры текстов",
            "умение писать просто о сложном",
            "знание основ SEO-копирайтинга",
        ],
        en_need: &[
            "Looking for a copywriter",
            "Need a content writer",
            "Hiring a ghostwriter",
            "Need an editor",
        ],
        en_tasks: &[
            "write blog articles for {biz}, 4 a month",
            "write website copy for {biz}",
            "write 40 product descriptions",
            "ghostwrite LinkedIn posts for our founder",
            "proofread a 120-page ebook",
        ],
        en_reqs: &[
            "native-level English",
            "writing samples",
            "SEO basics",
            "can match our tone of voice",
        ],
        ru_pro: "копирайтер",
        ru_pro_gen: "копирайтера",
        ru_offer: &[
            "Пишу продающие тексты, статьи, посты и описания товаров",
            "Редактура, корректура, сценарии для видео",
        ],
        en_pro: "copywriter",
        en_offer: &[
            "Sales pages, blog posts and email sequences",
            "SEO articles and product descriptions",
        ],
        ru_doing: "пишет тексты",
        en_doing: "write for a living",
        ru_course: "Копирайтинг",
        en_course: "Copywriting",
        rub: (1_500, 50_000),
        usd: (40, 1_500),
    },
    Cat {
        slug: "marketing",
        ru_tag: "таргет",
        en_tag: "marketing",
        ru_need: &[
            "Нужен таргетолог",
            "Ищем SMM-специалиста",
            "Требуется SEO-специалист",
            "Нужен маркетолог",
        ],
        ru_tasks: &[
            "настроить таргетированную рекламу ВКонтакте для {biz}",
            "вести Instagram и Telegram-канал {biz}",
            "продвинуть сайт {biz} в поиске Яндекса",
            "вывести карточки на Ozon в топ выдачи",
            "настроить email-рассылки и автоворонку",
        ],
        ru_reqs: &[
            "кейсы с цифрами",
            "опыт в нише от года",
            "умение считать юнит-экономику",
            "знание рекламного кабинета VK",
        ],
        en_need: &[
            "Looking for a media buyer",
            "Need an SMM manager",
            "Hiring an SEO specialist",
            "Need a growth marketer",
        ],
        en_tasks: &[
            "run Meta ads for {biz}",
            "do an SEO audit and link building for our site",
            "manage Instagram and TikTok for {biz}",
            "set up email flows in Klaviyo",
            "set up Google Ads for {biz}",
        ],
        en_reqs: &[
            "case studies with numbers",
            "experience with small budgets",
            "weekly reporting",
            "Google Analytics 4",
        ],
        ru_pro: "таргетолог",
        ru_pro_gen: "таргетолога",
        ru_offer: &[
            "Настраиваю таргет ВК и Яндекс Директ, веду соцсети",
            "SEO-продвижение сайтов, аудит, семантика",
        ],
        en_pro: "digital marketer",
        en_offer: &[
            "Meta and Google ads with clear reporting",
            "SEO audits, content plans and link building",
        ],
        ru_doing: "ведёт рекламу",
        en_doing: "run ads",
        ru_course: "Таргетированная реклама",
        en_course: "Paid Ads",
        rub: (5_000, 100_000),
        usd: (100, 3_000),
    },
    Cat {
        slug: "ai",
        ru_tag: "нейросети",
        en_tag: "ai",
        ru_need: &[
            "Нужен специалист по нейросетям",
            "Ищем промпт-инженера",
            "Требуется ML-разработчик",
            "Нужен человек, который разбирается в ИИ",
        ],
        ru_tasks: &[
            "сгенерировать изображения в Midjourney для {biz}",
            "настроить чат-бота на GPT по нашей базе знаний",
            "дообучить модель на наших данных",
            "составить промпты для генерации описаний товаров",
            "сделать ИИ-аватара с озвучкой для роликов {biz}",
        ],
        ru_reqs: &[
            "опыт с OpenAI API",
            "Midjourney или Stable Diffusion",
            "Python",
            "примеры генераций",
        ],
        en_need: &[
            "Looking for a prompt engineer",
            "Need an ML engineer",
            "Hiring an AI automation expert",
            "Need someone good with Midjourney",
        ],
        en_tasks: &[
            "build a RAG chatbot on our documentation",
            "fine-tune an open LLM on support tickets",
            "generate product photos with Stable Diffusion for {biz}",
            "create AI video ads for {biz}",
            "write prompts that turn specs into product descriptions",
        ],
        en_reqs: &[
            "hands-on LLM experience",
            "Python",
            "a portfolio of generations",
            "LangChain or LlamaIndex",
        ],
        ru_pro: "специалист по нейросетям",
        ru_pro_gen: "нейросетевика",
        ru_offer: &[
            "Генерирую изображения и видео в нейросетях, пишу промпты",
            "Внедряю GPT в бизнес: чат-боты, ассистенты, автоматизация",
        ],
        en_pro: "AI engineer",
        en_offer: &[
            "LLM apps, RAG chatbots and fine-tuning",
            "AI images and video for brands",
        ],
        ru_doing: "работает с нейросетями",
        en_doing: "work with AI",
        ru_course: "Нейросети для бизнеса",
        en_course: "AI Automation",
        rub: (5_000, 150_000),
        usd: (100, 5_000),
    },
    Cat {
        slug: "assistant",
        ru_tag: "ассистент",
        en_tag: "virtualassistant",
        ru_need: &[
            "Ищем ассистента",
            "Нужен менеджер по продажам",
            "Требуется модератор чата",
            "Нужен администратор онлайн-школы",
        ],
        ru_tasks: &[
            "вести календарь и почту руководителя",
            "модерировать Telegram-чат на 5 тысяч участников",
            "делать холодные звонки по базе {biz}",
            "отвечать клиентам {biz} в директе и мессенджерах",
            "администрировать онлайн-школу на GetCourse",
        ],
        ru_reqs: &[
            "ответственность",
            "грамотная речь",
            "опыт работы с CRM",
            "готовность работать 4-6 часов в день",
        ],
        en_need: &[
            "Looking for a virtual assistant",
            "Need a customer support rep",
            "Hiring an appointment setter",
            "Need a community moderator",
        ],
        en_tasks: &[
            "manage the inbox and calendar of a busy founder",
            "answer customer emails for {biz}",
            "book sales calls from our lead list",
            "moderate a Discord server with 8k members",
            "handle returns and refunds for {biz}",
        ],
        en_reqs: &[
            "fluent English",
            "1+ year in customer support",
            "reliable internet",
            "available in US hours",
        ],
        ru_pro: "онлайн-ассистент",
        ru_pro_gen: "ассистента",
        ru_offer: &[
            "Веду календарь, почту, таблицы, общаюсь с клиентами",
            "Модерирую чаты и веду продажи в переписке",
        ],
        en_pro: "virtual assistant",
        en_offer: &[
            "Inbox, calendar, bookkeeping and customer support",
            "Appointment setting and CRM upkeep",
        ],
        ru_doing: "работает ассистентом",
        en_doing: "work as a VA",
        ru_course: "Онлайн-ассистент",
        en_course: "Virtual Assistant",
        rub: (15_000, 70_000),
        usd: (200, 1_500),
    },
    Cat {
        slug: "audio",
        ru_tag: "озвучка",
        en_tag: "voiceover",
        ru_need: &[
            "Нужен диктор",
            "Ищем звукорежиссёра",
            "Требуется композитор",
            "Нужен человек на сведение подкаста",
        ],
        ru_tasks: &[
            "озвучить рекламный ролик на 30 секунд",
            "сводить подкаст {biz}, 4 выпуска в месяц",
            "написать музыку для мобильной игры",
            "почистить звук в записи интервью",
            "записать джингл для радио {biz}",
        ],
        ru_reqs: &[
            "хороший микрофон и тихое помещение",
            "демо голоса",
            "опыт сведения",
            "Adobe Audition или Reaper",
        ],
        en_need: &[
            "Looking for a voice actor",
            "Need a podcast editor",
            "Hiring a composer",
            "Need an audio engineer",
        ],
        en_tasks: &[
            "record a 60-second voice-over for {biz}",
            "edit our weekly podcast",
            "compose music for a mobile game",
            "narrate a 5-hour audiobook",
            "mix and master an EP",
        ],
        en_reqs: &[
            "a demo reel",
            "broadcast-quality home studio",
            "fast delivery",
            "experience with dialogue cleanup",
        ],
        ru_pro: "диктор",
        ru_pro_gen: "диктора",
        ru_offer: &[
            "Озвучиваю рекламу, ролики, аудиокниги, есть студия",
            "Сведение, мастеринг, чистка звука",
        ],
        en_pro: "voice actor",
        en_offer: &[
            "Warm male voice for ads, explainers and audiobooks",
            "Podcast editing, mixing and mastering",
        ],
        ru_doing: "занимается звуком",
        en_doing: "work with audio",
        ru_course: "Озвучка",
        en_course: "Voice Acting",
        rub: (1_500, 60_000),
        usd: (50, 2_000),
    },
    Cat {
        slug: "data",
        ru_tag: "аналитика",
        en_tag: "data",
        ru_need: &[
            "Нужен аналитик",
            "Ищем специалиста по Excel",
            "Требуется оператор ввода данных",
            "Нужен человек на таблицы",
        ],
        ru_tasks: &[
            "свести данные продаж в Google Таблицы и построить дашборд",
            "внести 2000 позиций в каталог {biz}",
            "собрать дашборд в Power BI по выгрузке из 1С",
            "собрать базу контактов {biz} из открытых источников",
            "проанализировать опрос клиентов и сделать выводы",
        ],
        ru_reqs: &[
            "уверенный Excel: ВПР, сводные таблицы",
            "внимательность",
            "SQL будет плюсом",
            "опыт с Power BI",
        ],
        en_need: &[
            "Looking for a data analyst",
            "Need a data entry assistant",
            "Hiring a Google Sheets wizard",
            "Need a market researcher",
        ],
        en_tasks: &[
            "build a Looker Studio dashboard from our Shopify data",
            "enter 1,500 products into our catalog",
            "automate a weekly report in Google Sheets",
            "research 200 competitors of {biz} and fill a spreadsheet",
            "clean and deduplicate a CRM export",
        ],
        en_reqs: &[
            "advanced Excel / Sheets",
            "attention to detail",
            "SQL is a plus",
            "experience with dashboards",
        ],
        ru_pro: "аналитик данных",
        ru_pro_gen: "аналитика",
        ru_offer: &[
            "Таблицы, дашборды, отчёты, парсинг данных",
            "Power BI, SQL, Python для анализа",
        ],
        en_pro: "data analyst",
        en_offer: &[
            "Dashboards, spreadsheets and clean reporting",
            "SQL, Python and Looker Studio",
        ],
        ru_doing: "работает с таблицами",
        en_doing: "do data work",
        ru_course: "Аналитика данных",
        en_course: "Data Analytics",
        rub: (3_000, 80_000),
        usd: (60, 2_000),
    },
    Cat {
        slug: "translation",
        ru_tag: "перевод",
        en_tag: "translation",
        ru_need: &[
            "Нужен переводчик",
            "Ищем переводчика с английского",
            "Требуется редактор перевода",
            "Нужен локализатор",
        ],
        ru_tasks: &[
            "перевести сайт {biz} с русского на английский",
            "локализовать приложение на испанский и португальский",
            "перевести договор поставки (юридическая тематика)",
            "сделать английские субтитры к видео",
            "перевести инструкцию к оборудованию с китайского",
        ],
        ru_reqs: &[
            "уровень C1 и выше",
            "опыт письменного перевода",
            "знание терминологии",
            "соблюдение сроков",
        ],
        en_need: &[
            "Looking for a translator",
            "Need an EN→DE translator",
            "Hiring a localization specialist",
            "Need a native Spanish proofreader",
        ],
        en_tasks: &[
            "translate the website of {biz} into French",
            "localize a mobile game into Spanish",
            "translate 30 product pages into German",
            "subtitle 12 videos in Portuguese",
            "proofread a machine translation of a user manual",
        ],
        en_reqs: &[
            "native speaker of the target language",
            "CAT tools experience",
            "samples of previous work",
        ],
        ru_pro: "переводчик",
        ru_pro_gen: "переводчика",
        ru_offer: &[
            "Перевожу с английского и немецкого, техническая и юридическая тематика",
            "Локализация сайтов и приложений, субтитры",
        ],
        en_pro: "translator",
        en_offer: &[
            "EN↔ES↔PT translation and localization",
            "Legal and technical translation, German and English",
        ],
        ru_doing: "переводит",
        en_doing: "translate",
        ru_course: "Перевод и локализация",
        en_course: "Translation",
        rub: (2_000, 60_000),
        usd: (50, 2_000),
    },
];

const RU_CHANNELS: [&str; 6] = [
    "@frilans_zakazy_bench",
    "@udalenka_vakansii_bench",
    "@it_frilans_ru_bench",
    "@designer_orders_bench",
    "@rabota_online_bench",
    "@zakazy_smm_bench",
];

const EN_CHANNELS: [&str; 5] = [
    "@freelance_hub_bench",
    "@remote_it_jobs_bench",
    "@va_jobs_bench",
    "@gigs_daily_bench",
    "@creative_gigs_bench",
];

const RU_BIZ: [&str; 24] = [
    "кофейни",
    "студии йоги",
    "магазина детской одежды",
    "стоматологии",
    "барбершопа",
    "агентства недвижимости",
    "онлайн-школы английского",
    "пекарни",
    "фитнес-клуба",
    "цветочного магазина",
    "юридической фирмы",
    "автосервиса",
    "салона красоты",
    "строительной компании",
    "интернет-магазина косметики",
    "частного психолога",
    "турагентства",
    "ресторана грузинской кухни",
    "мебельной фабрики",
    "ветклиники",
    "школы программирования для детей",
    "магазина чая",
    "производителя свечей",
    "студии маникюра",
];

const EN_BIZ: [&str; 22] = [
    "a coffee shop",
    "a yoga studio",
    "a kids clothing brand",
    "a dental clinic",
    "a barbershop",
    "a real estate agency",
    "an online English school",
    "a bakery",
    "a gym",
    "a flower shop",
    "a law firm",
    "a car repair shop",
    "a skincare brand",
    "a construction company",
    "a therapist",
    "a travel agency",
    "a Thai restaurant",
    "a furniture maker",
    "a vet clinic",
    "a SaaS startup",
    "a candle shop",
    "a crypto wallet",
];

const RU_NAMES: [&str; 16] = [
    "Анна",
    "Дмитрий",
    "Ольга",
    "Максим",
    "Екатерина",
    "Игорь",
    "Мария",
    "Алексей",
    "Светлана",
    "Никита",
    "Юлия",
    "Артём",
    "Ксения",
    "Сергей",
    "Дарья",
    "Руслан",
];

const EN_NAMES: [&str; 14] = [
    "Ana", "Kofi", "Maria", "James", "Priya", "Lucas", "Emily", "Tomás", "Chen", "Olivia", "Ahmed",
    "Sofia", "Daniel", "Fatima",
];

const HANDLE_NAMES: [&str; 24] = [
    "anna", "dmitry", "olga", "max", "katya", "igor", "masha", "alex", "sveta", "nikita", "julia",
    "artem", "ksu", "sergey", "dasha", "ruslan", "kofi", "priya", "lucas", "emily", "chen",
    "ahmed", "sofia", "dan",
];

const HANDLE_WORDS: [&str; 20] = [
    "design", "hr", "shop", "studio", "dev", "media", "team", "pro", "works", "lab", "agency",
    "brand", "ops", "hub", "store", "school", "edits", "texts", "data", "voice",
];

const PORTFOLIO_SITES: [&str; 5] = [
    "behance.net",
    "dribbble.com",
    "github.com",
    "t.me",
    "notion.site",
];

const RU_MARKS: [&str; 5] = ["вакансия", "отклик", "проект", "дизайн", "заказ"];
const EN_MARKS: [&str; 4] = ["APPLY", "gig", "portfolio", "hello"];

const RU_WEBINAR: [&str; 4] = [
    "найти первого заказчика на фрилансе",
    "поднять чек в 3 раза",
    "уйти из найма на удалёнку",
    "перестать демпинговать",
];
const EN_WEBINAR: [&str; 4] = [
    "land your first Upwork client",
    "triple your rates",
    "quit your 9-5 for freelancing",
    "write proposals that get replies",
];
const RU_WEEKDAYS: [&str; 5] = ["понедельник", "вторник", "среду", "четверг", "пятницу"];
const EN_WEEKDAYS: [&str; 5] = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday"];

const RU_JOB_FILLER: [&str; 24] = [
    "Доступы к аккаунтам и хостингу передадим сразу после старта.",
    "Ищем человека, с которым можно работать и дальше, задач много.",
    "Если есть вопросы по ТЗ, лучше задать их до начала работы.",
    "Можно совмещать с основной работой, главное — соблюдать сроки.",
    "Отзывы о нас можно посмотреть в канале, работаем честно.",
    "Пожалуйста, не присылайте шаблонные отклики, читаем каждый.",
    "Мы небольшая команда, работаем третий год, заказы стабильные.",
    "Проект долгосрочный: при хорошей работе будут ещё задачи.",
    "Оплата поэтапно, первая часть после согласования плана.",
    "Тестовое задание небольшое и оплачивается.",
    "Все материалы и доступы дадим, ТЗ готово.",
    "Работаем по договору ГПХ или с самозанятым.",
    "Важно быть на связи в рабочее время по Москве.",
    "Пришлите, пожалуйста, 2-3 похожих работы и сроки.",
    "Предыдущий исполнитель пропал, поэтому ищем ответственного человека.",
    "Есть референсы, покажем в личке.",
    "Если всё понравится, возьмём в команду на постоянку.",
    "Отвечаем всем, кто прислал примеры работ.",
    "Правки — в разумных пределах, обычно два круга.",
    "Созвон в начале, дальше переписка в Telegram.",
    "Без агентств, только частные специалисты.",
    "Оплата на карту или по счёту, как удобно.",
    "Опишите в отклике, как будете решать задачу.",
    "Студентов с хорошим портфолио тоже рассмотрим.",
];

const EN_JOB_FILLER: [&str; 24] = [
    "You'll get access to the accounts and hosting on day one.",
    "We have plenty of follow-up work for the right person.",
    "If anything in the brief is unclear, ask before you start.",
    "Fine to do next to a day job as long as deadlines are met.",
    "Our reviews are public in the channel, we pay on time.",
    "Please no copy-paste proposals, we read every message.",
    "We're a small remote team that has been around for three years.",
    "This is ongoing work if the first project goes well.",
    "Paid in milestones, the first one after we agree on the plan.",
    "There's a short paid test task.",
    "All assets and access will be provided, the brief is ready.",
    "Please include 2-3 similar projects and your timeline.",
    "Our previous freelancer disappeared, so reliability matters most.",
    "References are ready, we'll share them in DMs.",
    "Could turn into a long-term role for the right person.",
    "We reply to everyone who sends samples.",
    "Two rounds of revisions are usually enough.",
    "One kickoff call, then async on Slack.",
    "No agencies please, individuals only.",
    "Payment via Wise, PayPal or crypto.",
    "Tell us briefly how you'd approach it.",
    "Juniors with a strong portfolio are welcome too.",
    "Time zone doesn't matter much, we work async.",
    "Happy to sign an NDA before sharing details.",
];

const RU_RESUME_FILLER: [&str; 12] = [
    "Работаю быстро, всегда на связи.",
    "Беру небольшие тестовые задания.",
    "Есть отзывы от заказчиков, покажу в личке.",
    "Работаю по договору, самозанятая/самозанятый.",
    "Могу взять долгосрочный проект на частичную занятость.",
    "Люблю сложные задачи и понятные ТЗ.",
    "Сейчас есть свободное окно на ближайшие две недели.",
    "Сдаю в срок, правки в пределах ТЗ бесплатно.",
    "Раньше работал(а) в агентстве, сейчас на фрилансе.",
    "Готов(а) к созвону, чтобы обсудить задачу.",
    "Предоплата 50%, остальное после сдачи.",
    "Учусь постоянно, слежу за трендами.",
];

const EN_RESUME_FILLER: [&str; 12] = [
    "Fast replies, clear communication.",
    "Happy to do a small paid test.",
    "Reviews from past clients available on request.",
    "Open to long-term part-time work.",
    "I enjoy tricky problems and clear briefs.",
    "I have an opening for the next two weeks.",
    "On-time delivery, revisions within scope are free.",
    "Previously worked at an agency, now freelancing full time.",
    "Free 15-minute call to discuss your project.",
    "50% upfront, the rest on delivery.",
    "Based in Lisbon, flexible with time zones.",
    "Always learning and keeping up with trends.",
];

const RU_AD_FILLER: [&str; 10] = [
    "⚡️ Количество мест ограничено!",
    "Более 3000 выпускников уже зарабатывают на фрилансе.",
    "Гарантия возврата денег, если не понравится.",
    "Рассрочка без переплат на 12 месяцев.",
    "Подробности — по ссылке в профиле.",
    "Отзывы учеников в закрепе.",
    "Акция действует только до конца недели.",
    "Бонус: доступ в закрытый чат с заказами.",
    "Без вложений и рисков.",
    "Ответим на все вопросы в директе.",
];

const EN_AD_FILLER: [&str; 10] = [
    "⚡️ Spots are limited!",
    "3,000+ students already freelance full time.",
    "Money-back guarantee if you don't like it.",
    "Pay in 12 interest-free installments.",
    "Details at the link in bio.",
    "Student reviews pinned in the channel.",
    "Offer ends this Sunday.",
    "Bonus: access to our private gigs chat.",
    "No investment, no risk.",
    "Questions? We answer every DM.",
];

const RU_CHATTER_FILLER: [&str; 10] = [
    "Может кто сталкивался",
    "Буду благодарен за советы",
    "Всем хорошего дня",
    "Заранее спасибо",
    "Или я что-то не так делаю",
    "Интересно ваше мнение",
    "Пишу сюда, потому что в соседнем чате молчат",
    "Просто наболело",
    "Поделитесь опытом, пожалуйста",
    "Ну и вообще как у вас с заказами этой осенью",
];

const EN_CHATTER_FILLER: [&str; 10] = [
    "Anyone else run into this",
    "Any advice appreciated",
    "Have a great day everyone",
    "Thanks in advance",
    "Or am I doing something wrong",
    "Curious what you all think",
    "Posting here because the other group is dead",
    "Just needed to vent",
    "Please share your experience",
    "Also how's work been for everyone this month",
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_mix_is_realistic_distinct_and_deterministic() {
        let g = generate(600, 7);
        assert_eq!(g.posts.len(), 600);
        assert_eq!(g.near_duplicates, 0, "{} redraws", g.redraws);
        let share = |k: Kind| g.posts.iter().filter(|p| p.kind == k).count() as f64 / 600.0;
        assert!((0.38..=0.52).contains(&share(Kind::Job)));
        for k in [Kind::Resume, Kind::Ad, Kind::Chatter] {
            assert!(share(k) > 0.1, "{k:?}");
        }
        let ru = g.posts.iter().filter(|p| p.russian).count() as f64 / 600.0;
        assert!((0.5..=0.7).contains(&ru));
        for p in &g.posts {
            let n = p.text.chars().count();
            assert!((90..=1500).contains(&n), "{n}: {}", p.text);
            assert_eq!(p.is_job(), !p.categories.is_empty());
            for c in &p.categories {
                assert!(jobwire_core::category::standard_slugs().any(|s| s == *c));
            }
        }
        let again = generate(600, 7);
        assert!(
            g.posts
                .iter()
                .zip(&again.posts)
                .all(|(a, b)| a.text == b.text)
        );
    }
}
