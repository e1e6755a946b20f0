//! Feature extraction for the local model: hashed character n-grams, words, word bigrams,
//! and a few generic "kind of text" cues (money, contacts, hiring vs. offering oneself,
//! promotion, questions, length).

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

/// How text is turned into features. Stored with a trained model (prediction must extract
/// exactly the features training did).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FeatureOptions {
    /// Smallest character n-gram (within a word, with boundary marks).
    pub char_ngram_min: usize,
    /// Largest character n-gram.
    pub char_ngram_max: usize,
    /// Emit word bigrams besides word unigrams.
    pub word_bigrams: bool,
    /// Emit the hand-written cue features (money, contacts, first person, promo, ...).
    pub cues: bool,
    /// The value a present cue feature gets (the n-gram part is L2-normalized to 1).
    pub cue_weight: f32,
    /// The value a present topic feature gets.
    pub topic_weight: f32,
    /// Topic words per category slug (RU + EN stems): a post mentioning any of them gets a
    /// `topic:<slug>` feature. Words of up to 3 characters must match a whole token, longer
    /// ones match a token's beginning; several words must match consecutive tokens.
    pub topic_words: Vec<(String, Vec<String>)>,
    /// Only the first this many characters of a post are analyzed (bounds the cost of
    /// hostile, huge posts; vacancies are short).
    pub max_chars: usize,
}

impl Default for FeatureOptions {
    fn default() -> Self {
        Self {
            char_ngram_min: 3,
            char_ngram_max: 4,
            word_bigrams: true,
            cues: true,
            cue_weight: 2.0,
            topic_weight: 5.0,
            topic_words: default_topic_words(),
            max_chars: 4000,
        }
    }
}

/// Features of one text before weighting: n-gram counts and cue indicators, both keyed by a
/// stable 32-bit hash. Sorted by key, no duplicates.
#[derive(Debug, Clone, Default)]
pub(crate) struct RawFeatures {
    pub terms: Vec<(u32, f32)>,
    pub cues: Vec<u32>,
    pub topics: Vec<u32>,
}

/// FNV-1a, 32 bit, with a namespace byte: stable across Rust versions and platforms, so saved
/// models stay valid.
fn hash(ns: u8, parts: &[&str]) -> u32 {
    let mut h: u32 = 0x811c_9dc5;
    let mut eat = |b: u8| {
        h ^= u32::from(b);
        h = h.wrapping_mul(0x0100_0193);
    };
    eat(ns);
    for (i, p) in parts.iter().enumerate() {
        if i > 0 {
            eat(0x1f);
        }
        for &b in p.as_bytes() {
            eat(b);
        }
    }
    h
}

/// [`hash`] of one part given as characters (same value as hashing the collected string).
fn hash_chars(ns: u8, chars: &[char]) -> u32 {
    let mut h: u32 = 0x811c_9dc5;
    h ^= u32::from(ns);
    h = h.wrapping_mul(0x0100_0193);
    let mut utf8 = [0u8; 4];
    for c in chars {
        for &b in c.encode_utf8(&mut utf8).as_bytes() {
            h ^= u32::from(b);
            h = h.wrapping_mul(0x0100_0193);
        }
    }
    h
}

/// One token of the normalized text.
fn tokens(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for chunk in text.split_whitespace() {
        if is_url(chunk) {
            out.push("<url>".to_owned());
            continue;
        }
        let mut cur = String::new();
        let mut chars = chunk.chars().peekable();
        while let Some(c) = chars.next() {
            if c == '@'
                && chars
                    .peek()
                    .is_some_and(|n| n.is_alphanumeric() || *n == '_')
            {
                // A Telegram handle: the name itself is noise, the fact of a contact is not.
                flush(&mut cur, &mut out);
                out.push("<handle>".to_owned());
                while chars
                    .peek()
                    .is_some_and(|n| n.is_alphanumeric() || *n == '_')
                {
                    chars.next();
                }
            } else if c.is_alphanumeric() || c == '_' {
                cur.push(if c.is_numeric() { '0' } else { c });
            } else {
                flush(&mut cur, &mut out);
                if matches!(c, '$' | '€' | '₽' | '#' | '%' | '?' | '+' | '/') {
                    out.push(c.to_string());
                }
            }
        }
        flush(&mut cur, &mut out);
    }
    out
}

fn flush(cur: &mut String, out: &mut Vec<String>) {
    if !cur.is_empty() {
        // Runs of digits collapse to one shape ("0"), so prices of any size look alike.
        let mut shaped = String::with_capacity(cur.len());
        for c in cur.chars() {
            if !(c == '0' && shaped.ends_with('0')) {
                shaped.push(c);
            }
        }
        out.push(shaped);
        cur.clear();
    }
}

fn is_url(chunk: &str) -> bool {
    chunk.contains("://")
        || chunk.starts_with("www.")
        || chunk.starts_with("t.me/")
        || (chunk.contains('.')
            && chunk.contains('/')
            && chunk.chars().next().is_some_and(char::is_alphanumeric))
}

/// Finds topic phrases among tokens with one or two hash lookups per token instead of
/// comparing every phrase with every token.
#[derive(Debug, Clone, Default)]
pub(crate) struct TopicMatcher {
    /// Key: a short first word itself, or the first 4 characters of a longer one.
    by_key: HashMap<String, Vec<(u32, Vec<String>)>>,
}

const PREFIX_KEY: usize = 4;

impl TopicMatcher {
    pub(crate) fn new(topic_words: &[(String, Vec<String>)]) -> Self {
        let mut by_key: HashMap<String, Vec<(u32, Vec<String>)>> = HashMap::new();
        for (slug, phrases) in topic_words {
            let id = hash(b't', &[slug]);
            for phrase in phrases {
                let words: Vec<String> = phrase.split_whitespace().map(str::to_owned).collect();
                let Some(first) = words.first() else { continue };
                let key: String = if first.chars().count() <= 3 {
                    first.clone()
                } else {
                    first.chars().take(PREFIX_KEY).collect()
                };
                by_key.entry(key).or_default().push((id, words));
            }
        }
        Self { by_key }
    }

    fn matches(&self, toks: &[String]) -> Vec<u32> {
        let mut out = Vec::new();
        if self.by_key.is_empty() {
            return out;
        }
        let word_ok = |t: &str, w: &str| {
            if w.chars().count() <= 3 {
                t == w
            } else {
                t.starts_with(w)
            }
        };
        for (i, t) in toks.iter().enumerate() {
            let n = t.chars().count();
            let mut keys: Vec<&str> = Vec::with_capacity(2);
            if n <= 3 {
                keys.push(t);
            }
            if n >= PREFIX_KEY {
                let end = t.char_indices().nth(PREFIX_KEY).map_or(t.len(), |(j, _)| j);
                keys.push(&t[..end]);
            }
            for key in keys {
                for (id, words) in self.by_key.get(key).into_iter().flatten() {
                    if toks.len() - i >= words.len()
                        && toks[i..].iter().zip(words).all(|(t, w)| word_ok(t, w))
                    {
                        out.push(*id);
                    }
                }
            }
        }
        out.sort_unstable();
        out.dedup();
        out
    }
}

/// Extracts features from already-normalized text.
pub(crate) fn extract(
    normalized: &str,
    opts: &FeatureOptions,
    topics: &TopicMatcher,
) -> RawFeatures {
    let toks = tokens(normalized);
    let mut terms: Vec<u32> = Vec::with_capacity(toks.len() * 8);
    let lo = opts.char_ngram_min.max(1);
    let hi = opts.char_ngram_max.max(lo);
    let mut buf: Vec<char> = Vec::with_capacity(40);
    for (i, t) in toks.iter().enumerate() {
        terms.push(hash(b'w', &[t]));
        if opts.word_bigrams
            && let Some(next) = toks.get(i + 1)
        {
            terms.push(hash(b'b', &[t, next]));
        }
        if t.starts_with('<') || t.chars().count() == 1 || opts.char_ngram_max == 0 {
            continue;
        }
        buf.clear();
        buf.push('^');
        buf.extend(t.chars().take(24));
        buf.push('$');
        for n in lo..=hi {
            if n >= buf.len() {
                break;
            }
            for w in buf.windows(n) {
                terms.push(hash_chars(b'c', w));
            }
        }
    }
    terms.sort_unstable();
    let mut counted: Vec<(u32, f32)> = Vec::with_capacity(terms.len());
    for h in terms {
        match counted.last_mut() {
            Some((last, n)) if *last == h => *n += 1.0,
            _ => counted.push((h, 1.0)),
        }
    }
    let mut cues = if opts.cues {
        cue_features(normalized)
    } else {
        Vec::new()
    };
    let topics = topics.matches(&toks);
    cues.sort_unstable();
    cues.dedup();
    RawFeatures {
        terms: counted,
        cues,
        topics,
    }
}

/// Topic stems for the standard taxonomy (see `data/SCHEMA.md`), written from the category
/// descriptions and common freelance vocabulary, not from particular posts.
pub fn default_topic_words() -> Vec<(String, Vec<String>)> {
    const T: &[(&str, &str)] = &[
        (
            "web",
            "сайт|лендинг|landing|website|site|верстк|вёрстк|frontend|фронтенд|backend|бэкенд|wordpress|tilda|тильд|bitrix|битрикс|cms|html|css|react|vue|php|laravel|django|интернет магазин|shopify|webflow|веб|web",
        ),
        (
            "bots",
            "бот|бота|боты|bot|bots|скрипт|script|парсер|parser|парсинг|scrap|автоматизац|automation|automate|интеграц|integration|api|mini app|мини апп|discord|n8n|zapier|selenium|webhook",
        ),
        (
            "mobile",
            "ios|android|андроид|flutter|react native|swift|swiftui|kotlin|мобильн|mobile|app store|google play|приложени",
        ),
        (
            "design",
            "дизайн|design|логотип|logo|баннер|banner|ui|ux|figma|фигм|презентаци|presentation|иллюстрац|illustrat|карточк|инфографик|брендбук|branding|айдентик|photoshop|canva|обложк",
        ),
        (
            "video",
            "видео|video|монтаж|montage|editor|motion|моушн|reels|рилс|shorts|шортс|youtube|ютуб|tiktok|тикток|premiere|after effects|capcut|ролик",
        ),
        (
            "texts",
            "текст|копирайт|copywrit|статьи|статей|стать|article|рерайт|rewrit|редактур|контент|content|сценари|блог|blog|proofread|корректур|writer|writing|посты|постов",
        ),
        (
            "marketing",
            "smm|смм|таргет|target|реклам|ads|seo|сео|продвижени|promotion|маркетплейс|marketplace|wildberries|вайлдберриз|ozon|озон|email|рассылк|директ|маркетолог|marketing|трафик|traffic|лидоген|лиды|leads",
        ),
        (
            "ai",
            "ai|ии|нейросет|нейронк|neural|midjourney|stable diffusion|chatgpt|gpt|llm|prompt|промпт|ml|machine learning|генераци|generat|dall",
        ),
        (
            "assistant",
            "ассистент|assistant|помощник|помощниц|администратор|модератор|moderat|продаж|sales|звонк|calls|поддержк|support|customer|оператор|va|crm|календар|calendar",
        ),
        (
            "translation",
            "перевод|переводчик|translat|локализац|locali|с английского|на английский|native speaker|носител",
        ),
        (
            "audio",
            "озвучк|voice|диктор|голос|музык|music|подкаст|podcast|звук|sound|аудио|audio|сведени|mixing|mastering|джингл|jingle",
        ),
        (
            "data",
            "excel|эксель|sheets|таблиц|spreadsheet|data entry|ввод данных|аналитик|analytics|dashboard|дашборд|power bi|tableau|sql|research|исследовани|сбор данных|база данных|database|данны|data",
        ),
    ];
    T.iter()
        .map(|(slug, words)| {
            (
                (*slug).to_owned(),
                words.split('|').map(str::to_owned).collect(),
            )
        })
        .collect()
}

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
];

fn cue_features(text: &str) -> Vec<u32> {
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

/// A stable 64-bit fingerprint of a text (SHA-256 of the trimmed text, first 8 bytes).
pub(crate) fn fingerprint(text: &str) -> u64 {
    use sha2::{Digest, Sha256};
    let digest = Sha256::digest(text.trim().as_bytes());
    let mut first = [0u8; 8];
    first.copy_from_slice(&digest[..8]);
    u64::from_le_bytes(first)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn topic_phrases_match_whole_short_words_and_long_prefixes() {
        let m = TopicMatcher::new(&[
            (
                "ai".to_owned(),
                vec!["ai".to_owned(), "нейросет".to_owned()],
            ),
            ("web".to_owned(), vec!["интернет магазин".to_owned()]),
        ]);
        let toks = |s: &str| tokens(s);
        assert_eq!(m.matches(&toks("email me")), Vec::<u32>::new());
        assert_eq!(m.matches(&toks("ai art")), [hash(b't', &["ai"])]);
        assert_eq!(m.matches(&toks("нейросети для")), [hash(b't', &["ai"])]);
        assert_eq!(m.matches(&toks("интернет-магазин")), [hash(b't', &["web"])]);
        assert!(m.matches(&toks("интернет реклама")).is_empty());
        assert_eq!(hash_chars(b'c', &['a', 'ж']), hash(b'c', &["aж"]));
    }

    #[test]
    fn handles_urls_and_numbers_are_shaped() {
        let t = tokens("пишите @ivan_dev, бюджет 15000₽ https://x.ru/a");
        assert_eq!(t, ["пишите", "<handle>", "бюджет", "0", "₽", "<url>"]);
    }

    #[test]
    fn extraction_is_deterministic_and_bounded() {
        let opts = FeatureOptions::default();
        let topics = TopicMatcher::new(&opts.topic_words);
        let a = extract("need a tg bot, budget $100", &opts, &topics);
        let b = extract("need a tg bot, budget $100", &opts, &topics);
        assert_eq!(a.terms, b.terms);
        assert!(!a.cues.is_empty());
        assert_eq!(a.topics, [hash(b't', &["bots"])]);
        let huge = "ж".repeat(10_000);
        let f = extract(&huge, &opts, &topics);
        // One long word yields n-grams of its first 24 characters only.
        assert!(f.terms.len() < 100);
    }
}
