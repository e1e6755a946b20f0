//! Per-category domain lexicons: the words a freelancer recognises as "this is a design job",
//! "this is a bots job", … in Russian and English, matched on normalized tokens.
//!
//! A lexicon entry is one or more words that must match consecutive word tokens (punctuation,
//! links and handles are skipped, so `ui/ux`, `EN→RU` and `telegram-бот` are two words each):
//!
//! * a word of up to 3 characters matches a whole token, a longer one a token's beginning
//!   (a stem: `логотип` matches `логотипа`, `логотипы`);
//! * `=word` matches a whole token only (`=бот` matches `бот` but not `ботаника`);
//! * `{lang}` matches any language name or code (`english`, `немецкого`, `en`, `ru`), so
//!   `{lang} {lang}` finds `EN→ES` and `с английского на русский` is `{lang} на {lang}`;
//! * an entry starting with `~` is weak evidence (counts half).
//!
//! Words are shaped like the text is (normalized, digit runs become `0`), so `n8n` and `1С`
//! are written as is.
//!
//! The lists were written from the category descriptions of the taxonomy and general
//! freelance vocabulary, not from particular posts. Words that name the *context* of a job
//! rather than its task (YouTube, Shopify, Wildberries, Telegram) are left out on purpose:
//! a YouTube channel needs thumbnails (design), voice-over (audio) and montage (video) alike.

use std::collections::HashMap;

use super::features::word_tokens;

/// Default lexicons of the standard taxonomy, as `(slug, entries)`.
pub fn default_lexicon() -> Vec<(String, Vec<String>)> {
    const T: &[(&str, &str)] = &[
        (
            "web",
            "сайт|лендинг|landing|website|=site|=sites|верстк|сверста|сверстать|frontend|front end|\
             фронтенд|фронт енд|=фронт|backend|back end|бэкенд|бекенд|=бэк|fullstack|full stack|\
             фулстек|фуллстек|wordpress|вордпресс|=wp|tilda|тильд|bitrix|битрикс|=cms|=html|=css|\
             =scss|react|=vue|vue js|=nuxt|next js|nextjs|=angular|svelte|javascript|typescript|\
             =js|=php|laravel|django|=flask|fastapi|=ruby|rails|интернет магазин|webflow|=веб|\
             =web|web app|веб приложени|вебсайт|pagespeed|page speed|хостинг|hosting|=домен|\
             личный кабинет|личного кабинета|woocommerce|opencart|=modx|joomla|=drupal|\
             ~адаптив|~responsive|~=ssl|~=nginx",
        ),
        (
            "bots",
            "=бот|=бота|=боты|=ботов|=боту|=ботом|=боте|=bot|=bots|чат бот|чатбот|chatbot|\
             телеграм бот|telegram bot|tg bot|=тг бот|discord bot|userbot|юзербот|парсер|парсинг|\
             спарсить|parser|parsing|scrap|crawler|краулер|автоматизац|автоматизир|automat|\
             интеграц|integrat|mini app|miniapp|мини апп|мини приложени|n0n|zapier|make com|\
             selenium|puppeteer|playwright|webhook|вебхук|aiogram|telethon|pyrogram|=cron|\
             ~=api|~=python|~питон|~скрипт",
        ),
        (
            "mobile",
            "=ios|android|андроид|flutter|флаттер|react native|swift|swiftui|kotlin|котлин|\
             мобильн|mobile app|mobile apps|mobile application|app store|appstore|google play|\
             play market|приложени|=apk|xcode|=dart|=expo|testflight|=айос|=иос|\
             ~=app|~=apps|~iphone|~=ipad|~mobile",
        ),
        (
            "design",
            "дизайн|design|логотип|=лого|logo|баннер|banner|=ui|=ux|figma|фигм|презентаци|\
             presentation|pitch deck|=deck|слайд|slide|иллюстрац|illustrat|карточк|инфографик|\
             infographic|брендбук|brandbook|branding|брендинг|айдентик|фирменн стил|\
             photoshop|фотошоп|canva|обложк|thumbnail|превью|макет|mockup|wireframe|\
             прототип|prototype|~креатив|creatives|постер|poster|афиш|flyer|листовк|упаковк|\
             packaging|стикер|sticker|графическ|graphic|рисова|нарисова|отрисов|drawing|\
             artwork|ретуш|retouch|визуал|~visual|=арт|~vector|вектор|мерч",
        ),
        (
            "video",
            "видео|video|монтаж|монтажер|montage|video editor|video editing|motion|моушн|\
             анимац|анимир|animat|=reels|=reel|рилс|=shorts|шортс|premiere|after effects|\
             capcut|davinci|=ролик|ролика|ролики|роликов|видеоролик|=клип|клипы|=clip|=clips|\
             нарезк|съемк|~снять|videograph|видеограф|explainer|=vfx|субтитр|subtitl|\
             ~youtube|~ютуб|~tiktok|~тикток",
        ),
        (
            "texts",
            "текст|копирайт|copywrit|=статья|статьи|статей|статью|article|рерайт|rewrit|\
             редактур|редактор текст|proofread|корректор|корректур|сценари|scriptwrit|\
             script writer|=blog post|blog posts|посты|постов|=пост|writer|writing|ghostwrit|\
             =автор|=автора|знаков|=зн|~=words|manuscript|рукопис|=эссе|essay|\
             слоган|slogan|нейминг|naming|описани товар|product description|newsletter|\
             лонгрид|longread|=тз на|~контент|~content|~блог|~=blog|~редакт|~editing",
        ),
        (
            "marketing",
            "=smm|=смм|smm специалист|таргет|targeting|targetolog|реклам|=ads|meta ads|\
             google ads|facebook ads|=ppc|=seo|=сео|продвижени|продвигать|promotion|\
             маркетолог|marketer|маркетинг|marketing|трафик|traffic|лидоген|lead gen|\
             =лиды|=лидов|яндекс директ|=директолог|авито|avito|посев|закуп реклам|\
             influencer|инфлюенс|outreach|=kol|email marketing|рассылк|=ctr|=cpa|=cpl|=roas|\
             контент план|content plan|keyword|=в топ|вывести в топ|поисков выдач|~growth|=serm|=пиар|=pr|охват|\
             ~конверси|~воронк|~funnel|~блогер|~=brand",
        ),
        (
            "ai",
            "=ai|=ии|нейро|нейросет|нейронк|neural|midjourney|=mj|=sd|stable diffusion|\
             comfyui|=lora|chatgpt|=gpt|=llm|=llms|prompt|промпт|=ml|machine learning|\
             машинн обучени|deep learning|генерац|ai generat|=dall|dalle|elevenlabs|=rag|\
             langchain|llamaindex|openai|claude|fine tun|finetun|файнтюн|=nlp|computer vision|\
             pytorch|tensorflow|embedding|=sora|~runway|heygen|suno|=ии агент|ai agent|\
             клонир голос|voice clon|=lipsync|дипфейк|deepfake|\
             компьютерн зрени|обучить модель|обучение модел|=yolo|распознавани|нейронн сет",
        ),
        (
            "assistant",
            "ассистент|assistant|=va|помощник|помощниц|администратор|модерат|moderat|\
             менеджер по продажам|sales manager|sales rep|appointment setter|=setter|=sdr|\
             звонк|=calls|cold call|холодн звонк|обзвон|оператор|~поддержк|customer support|\
             customer service|клиентск поддержк|календар|calendar|=inbox|рекрутер|recruit|\
             =hr|секретар|secretary|куратор|чаттер|chatter|ответы на вопрос|\
             личный помощник|personal assistant|executive assistant|обработк заявок|\
             обработка входящих|отвечать клиент|отвечать покупател|ответы клиент|\
             ответы покупател|reply to customer|answer customer|~=crm|~amocrm|~=support|~=tickets|~продаж|~sales",
        ),
        (
            "translation",
            "перевод|переводчик|перевести|переведи|translat|локализ|locali|носител|native speaker|\
             natives|{lang} {lang}|{lang} на {lang}|{lang} to {lang}|{lang} into {lang}|\
             с {lang} на|from {lang} to|from {lang} into|=en ru|=ru en|транскреац|\
             transcreat|~interpret|устный перевод",
        ),
        (
            "audio",
            "озвуч|voice|диктор|дикторк|голос|музык|music|подкаст|podcast|~звук|~sound|sound design|звукорежисс|аудио|\
             audio|сведени|mixing|=mix|mastering|мастеринг|отмастер|джингл|jingle|=трек|треки|\
             треков|=beat|=бит|вокал|vocal|аранжир|саунд|=sfx|voiceover|voice over|\
             voice actor|=vo|narrat|дубляж|аудиокниг|audiobook|песн|=song|=songs|минусовк|\
             композитор|composer|шумодав|denois|noise|=шум|=шумы|шумов|recordings|аудиозапис|=dub|dubbing",
        ),
        (
            "data",
            "excel|эксель|=xls|=xlsx|=sheets|google sheet|гугл таблиц|таблиц|spreadsheet|\
             data entry|ввод данных|внесени данных|занесени|аналитик|analytics|analyst|\
             dashboard|дашборд|power bi|tableau|looker|metabase|=sql|=bi|=etl|bigquery|\
             =pandas|~research|~исследовани|market research|сбор данных|сбор информац|собрать информац|\
             собрать базу|собрать список|сбор базы|база контакт|compile a list|\
             ~database|~база данных|~=данные|~=данных|~=data|сводн|=vba|макрос|~macro|табличк|оцифров|перенести данные|внести данные|~отчет|~report|\
             ~=crm|~выгрузк|~статистик|~statistic",
        ),
    ];
    T.iter()
        .map(|(slug, words)| {
            (
                (*slug).to_owned(),
                words
                    .split('|')
                    .map(|w| w.split_whitespace().collect::<Vec<_>>().join(" "))
                    .filter(|w| !w.is_empty())
                    .collect(),
            )
        })
        .collect()
}

/// Language names (stems) and codes for `{lang}`.
const LANG_STEMS: &[&str] = &[
    "english",
    "spanish",
    "german",
    "french",
    "italian",
    "portugu",
    "japanese",
    "chinese",
    "mandarin",
    "korean",
    "arabic",
    "turkish",
    "polish",
    "dutch",
    "russian",
    "ukrainian",
    "hindi",
    "англ",
    "немец",
    "францу",
    "испан",
    "италья",
    "португ",
    "японск",
    "китайск",
    "корейск",
    "арабск",
    "турецк",
    "польск",
    "русск",
    "украинск",
];
const LANG_CODES: &[&str] = &[
    "en", "ru", "es", "de", "fr", "it", "pt", "ua", "uk", "zh", "cn", "jp", "ja", "ko", "kr", "ar",
    "tr", "pl", "nl", "eng", "rus", "англ", "рус",
];

#[derive(Debug, Clone, PartialEq)]
enum Word {
    /// The whole token.
    Exact(String),
    /// The token's beginning.
    Prefix(String),
    /// Any language name or code.
    Lang,
}

impl Word {
    fn matches(&self, t: &str) -> bool {
        match self {
            Word::Exact(w) => t == w,
            Word::Prefix(w) => t.starts_with(w.as_str()),
            Word::Lang => LANG_CODES.contains(&t) || LANG_STEMS.iter().any(|s| t.starts_with(s)),
        }
    }
}

#[derive(Debug, Clone)]
struct Entry {
    category: usize,
    words: Vec<Word>,
    weight: f32,
}

/// What a lexicon found for one category in one text.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub(crate) struct Evidence {
    /// Sum of the weights of the distinct entries found (1 per entry, ½ for weak ones).
    pub score: f32,
    /// Word index of the first match.
    pub first: Option<usize>,
}

/// Number of dense features [`Lexicon::dense`] yields per category.
pub(crate) const LEX_DIM: usize = 5;

/// Compiled lexicons: finds entries with one or two hash lookups per token.
#[derive(Debug, Clone, Default)]
pub(crate) struct Lexicon {
    /// Category slugs in the order the lexicons were given.
    slugs: Vec<String>,
    entries: Vec<Entry>,
    /// Entries by the key of their first word: a short word itself, or its first
    /// [`PREFIX_KEY`] characters.
    by_key: HashMap<String, Vec<usize>>,
    /// Entries whose first word is `{lang}`.
    lang_first: Vec<usize>,
}

const PREFIX_KEY: usize = 3;

impl Lexicon {
    pub(crate) fn new(lexicons: &[(String, Vec<String>)]) -> Self {
        let mut lex = Lexicon::default();
        for (slug, phrases) in lexicons {
            let category = lex.slugs.len();
            lex.slugs.push(slug.clone());
            for phrase in phrases {
                let (weight, phrase) = match phrase.strip_prefix('~') {
                    Some(rest) => (0.5, rest),
                    None => (1.0, phrase.as_str()),
                };
                let mut words = Vec::new();
                for raw in phrase.split_whitespace() {
                    if raw == "{lang}" {
                        words.push(Word::Lang);
                        continue;
                    }
                    let (exact, raw) = match raw.strip_prefix('=') {
                        Some(rest) => (true, rest),
                        None => (false, raw),
                    };
                    // Shape the word like the text: normalized, digits collapsed, split at
                    // punctuation.
                    let normalized = jobwire_core::normalize::normalize(raw);
                    for t in word_tokens(&normalized) {
                        if exact || t.chars().count() <= 3 {
                            words.push(Word::Exact(t));
                        } else {
                            words.push(Word::Prefix(t));
                        }
                    }
                }
                if words.is_empty() {
                    continue;
                }
                let id = lex.entries.len();
                match &words[0] {
                    Word::Lang => lex.lang_first.push(id),
                    Word::Exact(w) | Word::Prefix(w) => {
                        lex.by_key.entry(key_of(w)).or_default().push(id);
                    }
                }
                lex.entries.push(Entry {
                    category,
                    words,
                    weight,
                });
            }
        }
        lex
    }

    /// The category slugs, in lexicon order.
    pub(crate) fn slugs(&self) -> &[String] {
        &self.slugs
    }

    /// Evidence per category (in [`Lexicon::slugs`] order) in word tokens.
    pub(crate) fn evidence(&self, toks: &[String]) -> Vec<Evidence> {
        let mut out = vec![Evidence::default(); self.slugs.len()];
        if self.entries.is_empty() {
            return out;
        }
        let mut seen = vec![false; self.entries.len()];
        let mut found = |id: usize, pos: usize, out: &mut [Evidence]| {
            if !seen[id] {
                seen[id] = true;
                let e = &self.entries[id];
                let ev = &mut out[e.category];
                ev.score += e.weight;
                if ev.first.is_none_or(|f| pos < f) {
                    ev.first = Some(pos);
                }
            }
        };
        for (i, t) in toks.iter().enumerate() {
            let short = t.chars().count() < PREFIX_KEY;
            let candidates = self
                .by_key
                .get(if short { t.as_str() } else { prefix(t) })
                .into_iter()
                .flatten()
                .chain(if Word::Lang.matches(t) {
                    self.lang_first.as_slice()
                } else {
                    &[]
                });
            for &id in candidates {
                let words = &self.entries[id].words;
                if toks.len() - i >= words.len()
                    && words.iter().zip(&toks[i..]).all(|(w, t)| w.matches(t))
                {
                    found(id, i, &mut out);
                }
            }
        }
        out
    }

    /// Dense features of each category from the evidence of all: present, log of the score,
    /// share of all evidence, strongest of all, mentioned first. Zeros where nothing matched.
    pub(crate) fn dense(evidence: &[Evidence]) -> Vec<[f32; LEX_DIM]> {
        let total: f32 = evidence.iter().map(|e| e.score).sum();
        let best = evidence.iter().map(|e| e.score).fold(0.0f32, f32::max);
        let first = evidence.iter().filter_map(|e| e.first).min();
        evidence
            .iter()
            .map(|e| {
                if e.score <= 0.0 {
                    return [0.0; LEX_DIM];
                }
                [
                    1.0,
                    e.score.ln_1p(),
                    e.score / total,
                    f32::from(u8::from(e.score >= best)),
                    f32::from(u8::from(e.first == first)),
                ]
            })
            .collect()
    }
}

fn prefix(t: &str) -> &str {
    let end = t.char_indices().nth(PREFIX_KEY).map_or(t.len(), |(j, _)| j);
    &t[..end]
}

fn key_of(w: &str) -> String {
    prefix(w).to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lex() -> Lexicon {
        Lexicon::new(&default_lexicon())
    }

    fn scores(text: &str) -> Vec<(String, f32)> {
        let l = lex();
        let toks = word_tokens(&jobwire_core::normalize::normalize(text));
        l.slugs()
            .iter()
            .cloned()
            .zip(l.evidence(&toks).iter().map(|e| e.score))
            .filter(|(_, s)| *s > 0.0)
            .collect()
    }

    fn top(text: &str) -> String {
        let mut s = scores(text);
        s.sort_by(|a, b| b.1.total_cmp(&a.1));
        s.first().map(|(c, _)| c.clone()).unwrap_or_default()
    }

    #[test]
    fn typical_orders_point_at_their_category() {
        assert_eq!(top("Нужен логотип для кофейни и пара баннеров"), "design");
        assert_eq!(top("Ищу монтажёра на рилсы, 10 роликов в месяц"), "video");
        assert_eq!(top("Нужен копирайтер: 8 статей по 5к знаков"), "texts");
        assert_eq!(top("Ищу диктора, озвучка роликов мужским голосом"), "audio");
        assert_eq!(
            top("Перевод с английского на русский, 20 страниц"),
            "translation"
        );
        assert_eq!(
            top("Need a Flutter dev for our Android + iOS app"),
            "mobile"
        );
        assert_eq!(top("Нужен телеграм-бот для записи клиентов"), "bots");
        assert_eq!(top("Сверстать лендинг на Тильде"), "web");
        assert_eq!(top("Таргетолог для рекламы ВКонтакте, SMM"), "marketing");
        assert_eq!(top("Generate 50 images in Midjourney, prompt skills"), "ai");
        assert_eq!(top("Virtual assistant for inbox and calendar"), "assistant");
        assert_eq!(top("Дашборд в Google Sheets по продажам из Excel"), "data");
    }

    #[test]
    fn language_pairs_and_exact_words() {
        assert_eq!(top("EN→ES game, 9k words, $0.05/word"), "translation");
        assert_eq!(top("Japanese to English, 200 pages"), "translation");
        assert!(scores("fluent English required").is_empty());
        // `=бот` is a whole word: a botanist is not a bot.
        assert!(scores("ботаника").is_empty());
        // A weak entry counts half.
        assert_eq!(scores("python"), [("bots".to_owned(), 0.5)]);
    }

    #[test]
    fn dense_features_rank_the_evidence() {
        let l = lex();
        let toks = word_tokens(&jobwire_core::normalize::normalize(
            "Монтаж видео для подкаста: видео, монтаж, субтитры",
        ));
        let ev = l.evidence(&toks);
        let d = Lexicon::dense(&ev);
        let video = l.slugs().iter().position(|s| s == "video").unwrap_or(0);
        let audio = l.slugs().iter().position(|s| s == "audio").unwrap_or(0);
        assert_eq!(d[video][0], 1.0);
        assert_eq!(d[video][3], 1.0, "video is the strongest");
        assert_eq!(d[video][4], 1.0, "and mentioned first");
        assert_eq!(d[audio][3], 0.0);
        assert!(d[video][2] > d[audio][2]);
        let web = l.slugs().iter().position(|s| s == "web").unwrap_or(0);
        assert_eq!(d[web], [0.0; LEX_DIM]);
    }
}
