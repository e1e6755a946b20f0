//! The main bot's screens: the menu with the subscriber's settings, the menu's button
//! labels, the categories and filters screens, and help.

use jobwire_core::CategorySlug;
use jobwire_core::subscriber::MinBudget;
use jobwire_store::{BlockScope, SubscriberSpec};

use super::format::{bot_mentions, budget, escape, quiet, words};
use super::lang::Lang;
use super::view::CategoryView;

/// The subscriber's settings, one per line.
pub fn settings(
    lang: Lang,
    sub: &SubscriberSpec,
    blocked: bool,
    unreachable: &[(String, BlockScope)],
    min_budget: Option<&MinBudget>,
    categories: &[CategoryView],
) -> String {
    let none = lang.pick("нет", "none");
    let cats: Vec<String> = sub
        .categories
        .iter()
        .map(|slug| {
            categories
                .iter()
                .find(|c| &c.slug == slug)
                .map_or_else(|| escape(slug.as_str()), |c| escape(&c.name))
        })
        .collect();
    let cats = if cats.is_empty() {
        lang.pick("не выбраны", "none selected").to_owned()
    } else {
        cats.join(", ")
    };
    let include = if sub.include.is_empty() {
        lang.pick(
            "нет — все вакансии категорий",
            "none — every job of the categories",
        )
        .to_owned()
    } else {
        words(&sub.include)
    };
    let exclude = if sub.exclude.is_empty() {
        none.to_owned()
    } else {
        words(&sub.exclude)
    };
    let budget_line = min_budget.map_or_else(|| none.to_owned(), |b| budget(lang, b));
    let quiet_line = sub
        .quiet_hours
        .as_ref()
        .map_or_else(|| lang.pick("выключены", "off").to_owned(), quiet);
    let state = if blocked {
        lang.pick(
            "⛔ бот заблокирован — нажмите /start в ботах категорий",
            "⛔ bot blocked — press /start in the category bots",
        )
    } else if sub.paused {
        lang.pick("⏸ на паузе", "⏸ paused")
    } else {
        lang.pick("▶️ включена", "▶️ on")
    };
    let mut text = tr!(
        lang,
        "<b>Категории:</b> {cats}\n<b>Ключевые слова:</b> {include}\n<b>Исключить:</b> {exclude}\n<b>Минимальный бюджет:</b> {budget_line}\n<b>Тихие часы:</b> {quiet_line}\n<b>Доставка:</b> {state}",
        "<b>Categories:</b> {cats}\n<b>Keywords:</b> {include}\n<b>Exclude:</b> {exclude}\n<b>Minimum budget:</b> {budget_line}\n<b>Quiet hours:</b> {quiet_line}\n<b>Delivery:</b> {state}"
    );
    text.push_str(&unreachable_bots(lang, unreachable, categories));
    text
}

/// The main bot's notice that a category bot cannot write to the user until they start it.
pub fn start_the_bot(lang: Lang, bot_username: &str, category_names: &[String]) -> String {
    let who = format!("@{}", escape(bot_username));
    let what = category_names
        .iter()
        .map(|n| escape(n))
        .collect::<Vec<_>>()
        .join(", ");
    tr!(
        lang,
        "⚠️ Вакансии ({what}) присылает {who}, но Telegram не даёт ему написать вам первым. Откройте {who} и нажмите «Старт» — и вакансии начнут приходить.",
        "⚠️ {who} sends the jobs ({what}), but Telegram does not let it write to you first. Open {who} and press Start, and the jobs will arrive."
    )
}

/// One line per category bot that cannot write to the user, saying what to do, naming the
/// categories it would deliver.
fn unreachable_bots(
    lang: Lang,
    unreachable: &[(String, BlockScope)],
    categories: &[CategoryView],
) -> String {
    let mut out = String::new();
    for (bot, scope) in unreachable {
        let mine: Vec<&CategoryView> = categories.iter().filter(|c| &c.bot == bot).collect();
        let Some(first) = mine.first() else { continue };
        let who = format!("@{}", escape(&first.bot_username));
        let what = mine
            .iter()
            .map(|c| escape(&c.name))
            .collect::<Vec<_>>()
            .join(", ");
        out.push('\n');
        out.push_str(&match scope {
            BlockScope::NotStarted => tr!(
                lang,
                "⚠️ {who} ещё не может вам писать ({what}): откройте его и нажмите «Старт».",
                "⚠️ {who} cannot write to you yet ({what}): open it and press Start."
            ),
            _ => tr!(
                lang,
                "⛔ Вы заблокировали {who} ({what}): разблокируйте его, чтобы получать эти вакансии.",
                "⛔ You blocked {who} ({what}): unblock it to get these jobs."
            ),
        });
    }
    out
}

pub fn menu(lang: Lang, settings: &str) -> String {
    tr!(
        lang,
        "<b>jobwire</b> — заказы из Telegram-каналов и бирж через секунды после публикации.\n\nВыберите категории и настройте фильтры — подходящие вакансии будут приходить от ботов категорий.\n\n{settings}",
        "<b>jobwire</b> — freelance jobs from Telegram channels and job boards, seconds after they are posted.\n\nPick your categories and set filters — matching jobs arrive from the category bots.\n\n{settings}"
    )
}

/// Labels of the main menu's buttons.
#[derive(Debug, Clone, Copy)]
pub struct MenuLabels {
    pub categories: &'static str,
    pub filters: &'static str,
    pub pause: &'static str,
    pub resume: &'static str,
    pub status: &'static str,
    pub report: &'static str,
    pub help: &'static str,
    pub back: &'static str,
    pub include: &'static str,
    pub exclude: &'static str,
    pub budget: &'static str,
    pub quiet: &'static str,
    pub open_bot: &'static str,
}

pub fn labels(lang: Lang) -> MenuLabels {
    match lang {
        Lang::Ru => MenuLabels {
            categories: "📂 Категории",
            filters: "🔎 Фильтры",
            pause: "⏸ Пауза",
            resume: "▶️ Возобновить",
            status: "📋 Мои настройки",
            report: "📨 Пропущенная вакансия",
            help: "❓ Помощь",
            back: "⬅️ Назад",
            include: "➕ Ключевые слова",
            exclude: "➖ Исключить слова",
            budget: "💰 Мин. бюджет",
            quiet: "🌙 Тихие часы",
            open_bot: "Открыть",
        },
        Lang::En => MenuLabels {
            categories: "📂 Categories",
            filters: "🔎 Filters",
            pause: "⏸ Pause",
            resume: "▶️ Resume",
            status: "📋 My settings",
            report: "📨 Missed job",
            help: "❓ Help",
            back: "⬅️ Back",
            include: "➕ Keywords",
            exclude: "➖ Exclude words",
            budget: "💰 Min. budget",
            quiet: "🌙 Quiet hours",
            open_bot: "Open",
        },
    }
}

pub fn categories_screen(
    lang: Lang,
    categories: &[CategoryView],
    selected: &[CategorySlug],
) -> String {
    let mut text = lang
        .pick(
            "<b>Категории</b>\nНажмите на категорию, чтобы включить или выключить её.",
            "<b>Categories</b>\nTap a category to switch it on or off.",
        )
        .to_owned();
    let bots = bot_mentions(categories.iter().filter(|c| selected.contains(&c.slug)));
    if !bots.is_empty() {
        let list = bots.join(", ");
        text.push_str("\n\n");
        text.push_str(&tr!(lang, "Вакансии приходят от ботов категорий: {list}. Откройте каждого и нажмите «Старт» — иначе Telegram не позволит им написать вам.", "Jobs are sent by the category bots: {list}. Open each and press Start — Telegram does not let a bot write to you before that."));
    }
    if categories.is_empty() {
        text.push_str("\n\n");
        text.push_str(lang.pick(
            "Категории пока не настроены.",
            "No categories are configured yet.",
        ));
    }
    text
}

pub fn filters_screen(lang: Lang, settings: &str) -> String {
    tr!(
        lang,
        "<b>Фильтры</b>\nКлючевые слова: вакансия должна содержать хотя бы одно из них. Исключения: вакансии с этими словами не придут. Минимальный бюджет: вакансии с бюджетом ниже не придут (без бюджета — придут). Тихие часы: вакансии придут после их окончания.\n\n{settings}",
        "<b>Filters</b>\nKeywords: a job must contain at least one. Exclude: jobs with these words are not sent. Minimum budget: jobs with a lower budget are not sent (jobs without one are). Quiet hours: jobs arrive when they end.\n\n{settings}"
    )
}
pub fn help_main(lang: Lang, categories: &[CategoryView]) -> String {
    let bots = bot_mentions(categories);
    let bots_line = if bots.is_empty() {
        String::new()
    } else {
        let bots = bots.join(", ");
        tr!(
            lang,
            "\n\nБоты категорий: {bots}",
            "\n\nCategory bots: {bots}"
        )
    };
    let body = lang.pick(
        "<b>Как это работает</b>\njobwire читает каналы и биржи, отбирает настоящие заказы и присылает их через ботов категорий.\n\n/start — меню\n/categories — категории\n/filters — фильтры\n/include — ключевые слова\n/exclude — исключить слова\n/budget — минимальный бюджет\n/quiet — тихие часы\n/pause, /resume — пауза и возобновление\n/status — мои настройки\n/report — прислать пропущенную вакансию\n/cancel — отменить ввод\n\nЕсли бот категорий прислал не вакансию или не ту категорию, ответьте на его сообщение командой /wrong.",
        "<b>How it works</b>\njobwire reads channels and job boards, keeps the real jobs and sends them through the category bots.\n\n/start — menu\n/categories — categories\n/filters — filters\n/include — keywords\n/exclude — exclude words\n/budget — minimum budget\n/quiet — quiet hours\n/pause, /resume — pause and resume\n/status — my settings\n/report — send a missed job\n/cancel — cancel input\n\nIf a category bot sent something that is not a job or not of its category, reply /wrong to its message.",
    );
    format!("{body}{bots_line}")
}
