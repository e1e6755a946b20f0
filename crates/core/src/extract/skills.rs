//! The skills table: [`SKILLS`], the tools and technologies recognised in a post with their
//! spellings in Russian and English, and matching it against a post's text on word
//! boundaries (outside handles and links), in order of first appearance, at most
//! [`MAX_SKILLS`].

use std::sync::LazyLock;

use aho_corasick::{AhoCorasick, AhoCorasickBuilder, MatchKind};

use super::MAX_SKILLS;
use super::text::lower;

/// The skills and tools [`extract`](super::extract) recognizes: (display name, spellings).
/// Spellings are lowercase with `е` for `ё`, matched case-insensitively on word boundaries; a
/// trailing `*` lets a Russian stem take any ending (`фигм*` finds `фигме`, `фигму`).
/// Ambiguous words (`go`, `sketch`, `express`, `директ`) are left out or only matched in
/// unambiguous forms.
pub const SKILLS: &[(&str, &[&str])] = &[
    // Design
    ("Figma", &["figma", "фигм*"]),
    ("Photoshop", &["photoshop", "adobe photoshop", "фотошоп*"]),
    ("Illustrator", &["adobe illustrator", "иллюстратор adobe"]),
    ("InDesign", &["indesign", "индизайн*"]),
    ("Adobe XD", &["adobe xd"]),
    ("Framer", &["framer"]),
    ("Spline", &["spline"]),
    ("CorelDRAW", &["coreldraw", "corel draw", "корел*"]),
    ("Canva", &["canva", "канв*"]),
    ("Lightroom", &["lightroom", "лайтрум*"]),
    ("Procreate", &["procreate"]),
    ("Blender", &["blender", "блендер*"]),
    ("Cinema 4D", &["cinema 4d", "c4d"]),
    ("3ds Max", &["3ds max", "3dsmax", "3d max", "3д макс"]),
    ("ZBrush", &["zbrush"]),
    ("AutoCAD", &["autocad", "автокад*"]),
    ("Revit", &["revit", "ревит*"]),
    ("ArchiCAD", &["archicad", "архикад*"]),
    ("SketchUp", &["sketchup"]),
    ("UI/UX", &["ui/ux", "ux/ui", "ui-ux", "ux-ui", "ui ux"]),
    // Video and audio
    (
        "After Effects",
        &["after effects", "aftereffects", "афтер эффект*", "афтер*"],
    ),
    (
        "Premiere Pro",
        &["premiere pro", "adobe premiere", "premiere", "премьер про"],
    ),
    (
        "DaVinci Resolve",
        &[
            "davinci resolve",
            "davinci",
            "da vinci resolve",
            "давинчи*",
            "да винчи",
        ],
    ),
    ("Final Cut", &["final cut", "final cut pro", "файнал кат"]),
    ("CapCut", &["capcut", "кап кат", "капкут*"]),
    ("Adobe Audition", &["adobe audition"]),
    ("Ableton", &["ableton", "эблтон*"]),
    ("FL Studio", &["fl studio", "фл студи*"]),
    ("Logic Pro", &["logic pro"]),
    ("Pro Tools", &["pro tools", "protools"]),
    ("Cubase", &["cubase", "кубейс*"]),
    ("Reaper", &["reaper"]),
    ("iZotope", &["izotope", "izotope rx"]),
    // AI
    (
        "ChatGPT",
        &[
            "chatgpt",
            "chat gpt",
            "чатгпт",
            "чат gpt",
            "чат-гпт",
            "чат гпт",
            "gpt",
        ],
    ),
    ("OpenAI API", &["openai", "open ai"]),
    ("Claude", &["claude"]),
    (
        "Midjourney",
        &["midjourney", "миджорни", "мидджорни", "миджерни"],
    ),
    (
        "Stable Diffusion",
        &["stable diffusion", "стейбл диффуж*", "sdxl"],
    ),
    ("ComfyUI", &["comfyui", "comfy ui"]),
    ("DALL-E", &["dall-e", "dalle"]),
    ("Runway", &["runway"]),
    ("Kling", &["kling"]),
    ("Sora", &["sora"]),
    ("HeyGen", &["heygen"]),
    ("Synthesia", &["synthesia"]),
    ("ElevenLabs", &["elevenlabs", "eleven labs"]),
    ("Suno", &["suno"]),
    ("LangChain", &["langchain"]),
    ("PyTorch", &["pytorch"]),
    ("TensorFlow", &["tensorflow"]),
    ("YOLO", &["yolo*"]),
    ("OpenCV", &["opencv"]),
    ("LlamaIndex", &["llamaindex", "llama index"]),
    ("Hugging Face", &["hugging face", "huggingface"]),
    ("vLLM", &["vllm"]),
    // Web and site builders
    (
        "WordPress",
        &["wordpress", "wp", "вордпресс*", "вордпрес*", "word press"],
    ),
    ("WooCommerce", &["woocommerce"]),
    ("Elementor", &["elementor"]),
    ("Tilda", &["tilda", "тильд*"]),
    ("Wix", &["wix", "викс*"]),
    ("Webflow", &["webflow", "вебфлоу"]),
    ("Shopify", &["shopify", "шопифай*"]),
    (
        "Bitrix",
        &[
            "bitrix",
            "1c-bitrix",
            "1с-битрикс",
            "1с битрикс",
            "1c битрикс",
            "битрикс*",
        ],
    ),
    ("Bitrix24", &["bitrix24", "битрикс24", "битрикс 24"]),
    ("OpenCart", &["opencart", "опенкарт*"]),
    ("Joomla", &["joomla", "джумл*"]),
    ("MODX", &["modx"]),
    ("Taplink", &["taplink", "таплинк*"]),
    ("HTML", &["html", "html5"]),
    ("CSS", &["css", "css3", "scss", "sass"]),
    ("Tailwind", &["tailwind", "tailwindcss"]),
    ("Bootstrap", &["bootstrap"]),
    (
        "JavaScript",
        &["javascript", "js", "джаваскрипт*", "яваскрипт*"],
    ),
    ("TypeScript", &["typescript", "тайпскрипт*"]),
    ("jQuery", &["jquery"]),
    (
        "React",
        &[
            "react",
            "react.js",
            "reactjs",
            "реакт",
            "реакте",
            "реакта",
            "реактом",
        ],
    ),
    ("Next.js", &["next.js", "nextjs"]),
    ("Vue", &["vue", "vue.js", "vuejs", "nuxt", "nuxt.js"]),
    ("Angular", &["angular"]),
    ("Svelte", &["svelte"]),
    ("Node.js", &["node.js", "nodejs", "node", "нода", "ноде"]),
    ("NestJS", &["nestjs", "nest.js"]),
    ("PHP", &["php", "пхп"]),
    ("Laravel", &["laravel", "ларавел*"]),
    ("Symfony", &["symfony"]),
    ("Yii", &["yii", "yii2"]),
    ("Python", &["python", "питон*", "пайтон*"]),
    ("Django", &["django", "джанго"]),
    ("FastAPI", &["fastapi"]),
    ("Flask", &["flask"]),
    ("Go", &["golang"]),
    ("Rust", &["rust"]),
    ("Java", &["java"]),
    ("C#", &["c#", "си шарп"]),
    ("C++", &["c++"]),
    (".NET", &[".net", "asp.net", "dotnet"]),
    ("Ruby on Rails", &["ruby on rails", "rails"]),
    ("Ruby", &["ruby"]),
    ("GraphQL", &["graphql"]),
    ("SQL", &["sql"]),
    ("PostgreSQL", &["postgresql", "postgres", "постгрес*"]),
    ("MySQL", &["mysql"]),
    ("MongoDB", &["mongodb", "mongo"]),
    ("Redis", &["redis"]),
    ("ClickHouse", &["clickhouse"]),
    ("Kafka", &["kafka"]),
    ("RabbitMQ", &["rabbitmq"]),
    ("Celery", &["celery"]),
    ("Prisma", &["prisma"]),
    ("Firebase", &["firebase"]),
    ("Supabase", &["supabase"]),
    ("Docker", &["docker", "докер*"]),
    ("Kubernetes", &["kubernetes", "k8s"]),
    ("Linux", &["linux", "линукс*"]),
    ("Nginx", &["nginx"]),
    ("AWS", &["aws"]),
    ("Git", &["git"]),
    ("Stripe", &["stripe"]),
    ("Solidity", &["solidity"]),
    ("Web3", &["web3"]),
    // Mobile
    ("iOS", &["ios", "айос"]),
    ("Android", &["android", "андроид*"]),
    ("Swift", &["swift", "swiftui"]),
    ("Kotlin", &["kotlin", "котлин*"]),
    ("Flutter", &["flutter", "флаттер*"]),
    ("Dart", &["dart"]),
    (
        "React Native",
        &["react native", "react-native", "реакт нейтив"],
    ),
    ("Unity", &["unity", "юнити"]),
    ("Unreal Engine", &["unreal engine", "unreal", "анриал*"]),
    ("Godot", &["godot"]),
    // Bots, scraping, automation
    ("aiogram", &["aiogram", "айограм*"]),
    ("Telegraf", &["telegraf"]),
    ("grammY", &["grammy"]),
    ("Selenium", &["selenium", "селениум*"]),
    ("Playwright", &["playwright"]),
    ("Puppeteer", &["puppeteer"]),
    ("Scrapy", &["scrapy"]),
    ("Salebot", &["salebot", "сейлбот*", "салебот*"]),
    ("ManyChat", &["manychat"]),
    ("BotHelp", &["bothelp"]),
    ("n8n", &["n8n"]),
    ("Zapier", &["zapier"]),
    ("Make", &["make.com"]),
    (
        "amoCRM",
        &[
            "amocrm",
            "amo crm",
            "амоcrm",
            "амо срм",
            "амосрм",
            "амо crm",
        ],
    ),
    ("GetCourse", &["getcourse", "геткурс*", "get course"]),
    ("YCLIENTS", &["yclients"]),
    ("1C", &["1c", "1с"]),
    // Data
    ("Excel", &["excel", "ms excel", "эксел*"]),
    (
        "Google Sheets",
        &[
            "google sheets",
            "google таблиц*",
            "гугл таблиц*",
            "гугл-таблиц*",
            "google-таблиц*",
            "гугл шит*",
        ],
    ),
    ("VBA", &["vba"]),
    ("Power BI", &["power bi", "powerbi"]),
    ("Tableau", &["tableau"]),
    ("BigQuery", &["bigquery", "big query"]),
    ("Snowflake", &["snowflake"]),
    ("dbt", &["dbt"]),
    ("Airflow", &["airflow"]),
    ("Metabase", &["metabase"]),
    ("Looker Studio", &["looker studio", "looker"]),
    ("pandas", &["pandas"]),
    ("NumPy", &["numpy"]),
    ("Notion", &["notion", "ноушн*"]),
    ("Miro", &["miro"]),
    ("Trello", &["trello", "трелло"]),
    ("Jira", &["jira"]),
    // Marketing
    ("SEO", &["seo", "сео"]),
    ("SMM", &["smm", "смм"]),
    ("Targeting", &["таргет*"]),
    ("Google Ads", &["google ads", "гугл адс", "adwords"]),
    ("Meta Ads", &["meta ads", "facebook ads", "fb ads"]),
    (
        "Yandex Direct",
        &[
            "яндекс директ*",
            "яндекс.директ*",
            "yandex direct",
            "я.директ*",
        ],
    ),
    (
        "Yandex Metrica",
        &[
            "яндекс метрик*",
            "яндекс.метрик*",
            "yandex metrica",
            "yandex metrika",
        ],
    ),
    ("Google Analytics", &["google analytics", "ga4"]),
    ("Unisender", &["unisender", "юнисендер*"]),
    ("Mailchimp", &["mailchimp"]),
    ("Klaviyo", &["klaviyo"]),
    ("HubSpot", &["hubspot"]),
    ("Salesforce", &["salesforce"]),
    ("Google Tag Manager", &["google tag manager", "gtm"]),
    ("Wildberries", &["wildberries", "вайлдберриз", "вб", "wb"]),
    ("Ozon", &["ozon", "озон*"]),
    // Translation
    ("Trados", &["trados", "традос*"]),
    ("Smartcat", &["smartcat"]),
    ("memoQ", &["memoq"]),
];

/// The automaton over every spelling, and per pattern: (skill index, stem).
type SkillMatcher = (AhoCorasick, Vec<(usize, bool)>);
static SKILL_MATCHER: LazyLock<Option<SkillMatcher>> = LazyLock::new(|| {
    let mut patterns = Vec::new();
    let mut meta = Vec::new();
    for (i, (_, spellings)) in SKILLS.iter().enumerate() {
        for s in *spellings {
            let stem = s.ends_with('*');
            patterns.push(s.trim_end_matches('*').to_owned());
            meta.push((i, stem));
        }
    }
    AhoCorasickBuilder::new()
        .match_kind(MatchKind::LeftmostLongest)
        .build(&patterns)
        .ok()
        .map(|ac| (ac, meta))
});

pub(super) fn skills_of(text: &str) -> Vec<String> {
    let Some((automaton, meta)) = SKILL_MATCHER.as_ref() else {
        return Vec::new();
    };
    let lc: String = text
        .chars()
        .map(|c| match lower(c) {
            'ё' => 'е',
            c => c,
        })
        .collect();
    let mut out: Vec<String> = Vec::new();
    for m in automaton.find_iter(&lc) {
        let (skill, stem) = meta[m.pattern().as_usize()];
        let before = lc[..m.start()].chars().next_back();
        let mut rest = lc[m.end()..].chars().peekable();
        if stem {
            while rest.next_if(|c| c.is_alphanumeric()).is_some() {}
        }
        let after = rest.next();
        let word_char = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || c == '_');
        if word_char(before) || word_char(after) {
            continue;
        }
        // `@figma_jobs`, `t.me/tilda_help`, `site.wix.com`: names inside handles and links.
        if before.is_some_and(|c| matches!(c, '@' | '/' | '.')) {
            continue;
        }
        let name = SKILLS[skill].0;
        if !out.iter().any(|s| s == name) {
            out.push(name.to_owned());
            if out.len() == MAX_SKILLS {
                break;
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::extract::extract_skills;

    #[test]
    fn skills() {
        assert_eq!(
            extract_skills("Нужен дизайн в Фигме и фотошопе, потом вёрстка на Тильде. #figma"),
            ["Figma", "Photoshop", "Tilda"]
        );
        assert_eq!(
            extract_skills("React Native + Node.js, C++ и C# не нужны, 1С-Битрикс тоже"),
            ["React Native", "Node.js", "C++", "C#", "Bitrix"]
        );
        assert_eq!(
            extract_skills("Монтаж в After Effects / Premiere Pro / DaVinci, превью в Midjourney"),
            [
                "After Effects",
                "Premiere Pro",
                "DaVinci Resolve",
                "Midjourney"
            ]
        );
        assert_eq!(
            extract_skills("Выгрузка в 1С и Excel, SEO и SMM"),
            ["1C", "Excel", "SEO", "SMM"]
        );
        // Word boundaries, handles and ordinary words.
        assert!(extract_skills("robot reactivation, @figma_jobs, jsonl, реактивация").is_empty());
        let many = "python react vue php swift kotlin flutter figma excel seo smm wordpress";
        assert_eq!(extract_skills(many).len(), MAX_SKILLS);
        // Every spelling is lowercase (the text is lowercased before matching).
        for (name, spellings) in SKILLS {
            for s in *spellings {
                assert_eq!(*s, s.to_lowercase(), "{name}");
                assert!(!s.contains('ё'), "{name}");
            }
        }
    }
}
