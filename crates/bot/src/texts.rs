//! Everything the bots say, in Russian (first) and English. All functions return Telegram
//! HTML; anything that came from a user is escaped.

use jobwire_core::extract::BudgetBasis;
use jobwire_store::{QuietHoursSpec, SubscriberSpec};

use jobwire_core::subscriber::MinBudget;

use crate::input::InputError;

/// The language a reply is written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lang {
    Ru,
    En,
}

impl Lang {
    /// Russian for users of the Russian-speaking world and for users whose client does not
    /// say; English for everyone else.
    pub fn from_code(code: Option<&str>) -> Self {
        let Some(code) = code else {
            return Self::Ru;
        };
        let primary = code
            .split(['-', '_'])
            .next()
            .unwrap_or("")
            .to_ascii_lowercase();
        match primary.as_str() {
            "" | "ru" | "uk" | "be" | "kk" | "uz" | "ky" | "tg" | "hy" | "az" | "ka" | "tk"
            | "mo" => Self::Ru,
            _ => Self::En,
        }
    }

    fn pick(self, ru: &'static str, en: &'static str) -> &'static str {
        match self {
            Self::Ru => ru,
            Self::En => en,
        }
    }
}

/// Escapes text for Telegram's HTML parse mode.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            _ => out.push(c),
        }
    }
    out
}

/// A category as the menus show it.
#[derive(Debug, Clone)]
pub struct CategoryView {
    pub slug: String,
    pub name: String,
    /// `@username` of the bot that delivers it.
    pub bot_username: String,
    /// Whether that bot is the main bot itself (then there is nothing else to start).
    pub delivered_by_main: bool,
}

impl CategoryView {
    /// `https://t.me/<bot>?start=<slug>`: opens the category bot and subscribes on Start.
    pub fn start_link(&self) -> String {
        format!("https://t.me/{}?start={}", self.bot_username, self.slug)
    }
}

/// Groups the thousands of an amount: `5 000`, `12.5`.
pub fn amount(value: f64) -> String {
    let whole = value.trunc();
    let frac = value - whole;
    let digits = format!("{whole:.0}");
    let mut grouped = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            grouped.push('\u{a0}');
        }
        grouped.push(c);
    }
    if frac.abs() > 1e-9 {
        let f = format!("{frac:.2}");
        grouped.push_str(f.trim_start_matches('0').trim_end_matches('0'));
    }
    grouped
}

pub fn budget(lang: Lang, b: &MinBudget) -> String {
    let per = match (lang, b.basis) {
        (Lang::Ru, BudgetBasis::Fixed) => "за проект",
        (Lang::Ru, BudgetBasis::Hourly) => "в час",
        (Lang::Ru, BudgetBasis::Monthly) => "в месяц",
        (Lang::En, BudgetBasis::Fixed) => "per job",
        (Lang::En, BudgetBasis::Hourly) => "per hour",
        (Lang::En, BudgetBasis::Monthly) => "per month",
    };
    format!(
        "{} {} {} {per}",
        lang.pick("от", "from"),
        amount(b.amount),
        b.currency
    )
}

fn quiet(lang: Lang, q: &QuietHoursSpec) -> String {
    let _ = lang;
    format!("{}–{} ({})", q.start, q.end, escape(&q.time_zone))
}

fn words(list: &[String]) -> String {
    list.iter()
        .map(|w| format!("<code>{}</code>", escape(w)))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The subscriber's settings, one per line.
pub fn settings(
    lang: Lang,
    sub: &SubscriberSpec,
    blocked: bool,
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
                .map_or_else(|| escape(slug), |c| escape(&c.name))
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
    let quiet_line = sub.quiet_hours.as_ref().map_or_else(
        || lang.pick("выключены", "off").to_owned(),
        |q| quiet(lang, q),
    );
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
    match lang {
        Lang::Ru => format!(
            "<b>Категории:</b> {cats}\n<b>Ключевые слова:</b> {include}\n<b>Исключить:</b> {exclude}\n<b>Минимальный бюджет:</b> {budget_line}\n<b>Тихие часы:</b> {quiet_line}\n<b>Доставка:</b> {state}"
        ),
        Lang::En => format!(
            "<b>Categories:</b> {cats}\n<b>Keywords:</b> {include}\n<b>Exclude:</b> {exclude}\n<b>Minimum budget:</b> {budget_line}\n<b>Quiet hours:</b> {quiet_line}\n<b>Delivery:</b> {state}"
        ),
    }
}

pub fn menu(lang: Lang, settings: &str) -> String {
    match lang {
        Lang::Ru => format!(
            "<b>jobwire</b> — заказы из Telegram-каналов и бирж через секунды после публикации.\n\nВыберите категории и настройте фильтры — подходящие вакансии будут приходить от ботов категорий.\n\n{settings}"
        ),
        Lang::En => format!(
            "<b>jobwire</b> — freelance jobs from Telegram channels and job boards, seconds after they are posted.\n\nPick your categories and set filters — matching jobs arrive from the category bots.\n\n{settings}"
        ),
    }
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

pub fn categories_screen(lang: Lang, categories: &[CategoryView], selected: &[String]) -> String {
    let mut text = lang
        .pick(
            "<b>Категории</b>\nНажмите на категорию, чтобы включить или выключить её.",
            "<b>Categories</b>\nTap a category to switch it on or off.",
        )
        .to_owned();
    let mut bots: Vec<&str> = Vec::new();
    for c in categories {
        if selected.contains(&c.slug)
            && !c.delivered_by_main
            && !bots.contains(&c.bot_username.as_str())
        {
            bots.push(&c.bot_username);
        }
    }
    if !bots.is_empty() {
        let list = bots
            .iter()
            .map(|b| format!("@{}", escape(b)))
            .collect::<Vec<_>>()
            .join(", ");
        text.push_str("\n\n");
        text.push_str(&match lang {
            Lang::Ru => format!(
                "Вакансии приходят от ботов категорий: {list}. Откройте каждого и нажмите «Старт» — иначе Telegram не позволит им написать вам."
            ),
            Lang::En => format!(
                "Jobs are sent by the category bots: {list}. Open each and press Start — Telegram does not let a bot write to you before that."
            ),
        });
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
    match lang {
        Lang::Ru => format!(
            "<b>Фильтры</b>\nКлючевые слова: вакансия должна содержать хотя бы одно из них. Исключения: вакансии с этими словами не придут. Минимальный бюджет: вакансии с бюджетом ниже не придут (без бюджета — придут). Тихие часы: вакансии придут после их окончания.\n\n{settings}"
        ),
        Lang::En => format!(
            "<b>Filters</b>\nKeywords: a job must contain at least one. Exclude: jobs with these words are not sent. Minimum budget: jobs with a lower budget are not sent (jobs without one are). Quiet hours: jobs arrive when they end.\n\n{settings}"
        ),
    }
}

fn current_or_none(lang: Lang, current: &str) -> String {
    if current.is_empty() {
        lang.pick("не задано", "not set").to_owned()
    } else {
        current.to_owned()
    }
}

pub fn ask_include(lang: Lang, current: &[String], max: usize) -> String {
    let cur = current_or_none(lang, &words(current));
    match lang {
        Lang::Ru => format!(
            "Сейчас: {cur}\n\nПришлите ключевые слова через запятую (до {max}), например: <code>python, django, #remote</code>\nВакансия придёт, если в ней есть хотя бы одно слово. <code>нет</code> — убрать все, /cancel — отмена."
        ),
        Lang::En => format!(
            "Now: {cur}\n\nSend keywords separated by commas (up to {max}), e.g. <code>python, django, #remote</code>\nA job is sent if it contains at least one. <code>none</code> clears them, /cancel cancels."
        ),
    }
}

pub fn ask_exclude(lang: Lang, current: &[String], max: usize) -> String {
    let cur = current_or_none(lang, &words(current));
    match lang {
        Lang::Ru => format!(
            "Сейчас: {cur}\n\nПришлите слова через запятую (до {max}), с которыми вакансии присылать не нужно, например: <code>бесплатно, стажировка, #офис</code>\n<code>нет</code> — убрать все, /cancel — отмена."
        ),
        Lang::En => format!(
            "Now: {cur}\n\nSend words separated by commas (up to {max}) that should keep a job away, e.g. <code>unpaid, internship, #office</code>\n<code>none</code> clears them, /cancel cancels."
        ),
    }
}

pub fn ask_budget(lang: Lang, current: Option<&MinBudget>) -> String {
    let cur = current.map_or_else(|| current_or_none(lang, ""), |b| budget(lang, b));
    match lang {
        Lang::Ru => format!(
            "Сейчас: {cur}\n\nПришлите минимальный бюджет, например: <code>5000 руб</code>, <code>300 usd</code>, <code>50 $/час</code>, <code>150k руб/мес</code>. Без валюты — рубли.\n<code>0</code> или <code>нет</code> — без ограничения, /cancel — отмена."
        ),
        Lang::En => format!(
            "Now: {cur}\n\nSend the minimum budget, e.g. <code>300 usd</code>, <code>50 $/h</code>, <code>5000 rub</code>, <code>4000 eur/month</code>. Without a currency: US dollars.\n<code>0</code> or <code>none</code> removes the limit, /cancel cancels."
        ),
    }
}

pub fn ask_quiet(lang: Lang, current: Option<&QuietHoursSpec>) -> String {
    let cur = current.map_or_else(|| current_or_none(lang, ""), |q| quiet(lang, q));
    match lang {
        Lang::Ru => format!(
            "Сейчас: {cur}\n\nПришлите интервал и часовой пояс, например: <code>23:00-08:00 Europe/Moscow</code>. Вакансии за это время придут утром.\n<code>выкл</code> — выключить, /cancel — отмена."
        ),
        Lang::En => format!(
            "Now: {cur}\n\nSend the window and your time zone, e.g. <code>23:00-08:00 Europe/London</code>. Jobs posted meanwhile arrive when it ends.\n<code>off</code> switches quiet hours off, /cancel cancels."
        ),
    }
}

pub fn ask_report(lang: Lang) -> String {
    lang.pick(
        "Перешлите сюда вакансию, которую бот не прислал, или вставьте её текст (можно со ссылкой). Мы проверим и научим классификатор. /cancel — отмена.",
        "Forward the job the bot missed, or paste its text (a link helps). We will review it and teach the classifier. /cancel cancels.",
    )
    .to_owned()
}

pub fn include_saved(lang: Lang, list: &[String]) -> String {
    if list.is_empty() {
        return lang
            .pick(
                "✅ Ключевые слова убраны: придут все вакансии ваших категорий.",
                "✅ Keywords cleared: every job of your categories will be sent.",
            )
            .to_owned();
    }
    format!(
        "{} {}",
        lang.pick("✅ Ключевые слова сохранены:", "✅ Keywords saved:"),
        words(list)
    )
}

pub fn exclude_saved(lang: Lang, list: &[String]) -> String {
    if list.is_empty() {
        return lang
            .pick("✅ Исключения убраны.", "✅ Exclusions cleared.")
            .to_owned();
    }
    format!(
        "{} {}",
        lang.pick("✅ Исключения сохранены:", "✅ Exclusions saved:"),
        words(list)
    )
}

pub fn budget_saved(lang: Lang, b: Option<&MinBudget>) -> String {
    match b {
        None => lang
            .pick("✅ Минимальный бюджет убран.", "✅ Minimum budget removed.")
            .to_owned(),
        Some(b) => format!(
            "{} {}",
            lang.pick("✅ Минимальный бюджет:", "✅ Minimum budget:"),
            budget(lang, b)
        ),
    }
}

pub fn quiet_saved(lang: Lang, q: Option<&QuietHoursSpec>) -> String {
    match q {
        None => lang
            .pick("✅ Тихие часы выключены.", "✅ Quiet hours are off.")
            .to_owned(),
        Some(q) => format!(
            "{} {}",
            lang.pick("✅ Тихие часы:", "✅ Quiet hours:"),
            quiet(lang, q)
        ),
    }
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
    match lang {
        Lang::Ru => format!("🙏 Спасибо! Сообщение №{id} принято, мы его рассмотрим."),
        Lang::En => format!("🙏 Thank you! Report #{id} is filed; we will review it."),
    }
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

pub fn help_main(lang: Lang, categories: &[CategoryView]) -> String {
    let mut bots: Vec<String> = Vec::new();
    for c in categories {
        let b = format!("@{}", escape(&c.bot_username));
        if !c.delivered_by_main && !bots.contains(&b) {
            bots.push(b);
        }
    }
    let bots_line = if bots.is_empty() {
        String::new()
    } else {
        match lang {
            Lang::Ru => format!("\n\nБоты категорий: {}", bots.join(", ")),
            Lang::En => format!("\n\nCategory bots: {}", bots.join(", ")),
        }
    };
    let body = lang.pick(
        "<b>Как это работает</b>\njobwire читает каналы и биржи, отбирает настоящие заказы и присылает их через ботов категорий.\n\n/start — меню\n/categories — категории\n/filters — фильтры\n/include — ключевые слова\n/exclude — исключить слова\n/budget — минимальный бюджет\n/quiet — тихие часы\n/pause, /resume — пауза и возобновление\n/status — мои настройки\n/report — прислать пропущенную вакансию\n/cancel — отменить ввод\n\nЕсли бот категорий прислал не вакансию или не ту категорию, ответьте на его сообщение командой /wrong.",
        "<b>How it works</b>\njobwire reads channels and job boards, keeps the real jobs and sends them through the category bots.\n\n/start — menu\n/categories — categories\n/filters — filters\n/include — keywords\n/exclude — exclude words\n/budget — minimum budget\n/quiet — quiet hours\n/pause, /resume — pause and resume\n/status — my settings\n/report — send a missed job\n/cancel — cancel input\n\nIf a category bot sent something that is not a job or not of its category, reply /wrong to its message.",
    );
    format!("{body}{bots_line}")
}

/// Explains a refused input; the question stays open.
pub fn input_error(lang: Lang, e: &InputError) -> String {
    let why = match (lang, e) {
        (Lang::Ru, InputError::Empty) => "Не вижу ни одного слова.".to_owned(),
        (Lang::En, InputError::Empty) => "I see no words there.".to_owned(),
        (Lang::Ru, InputError::TooManyKeywords { given, max }) => {
            format!("Слишком много слов: {given}, можно не больше {max}.")
        }
        (Lang::En, InputError::TooManyKeywords { given, max }) => {
            format!("Too many words: {given}; at most {max}.")
        }
        (Lang::Ru, InputError::KeywordTooLong { keyword, max }) => format!(
            "Слишком длинное слово «{}»: не больше {max} символов.",
            escape(keyword)
        ),
        (Lang::En, InputError::KeywordTooLong { keyword, max }) => format!(
            "“{}” is too long: at most {max} characters.",
            escape(keyword)
        ),
        (Lang::Ru, InputError::BadKeyword { keyword }) => format!(
            "«{}» не подходит: хэштег пишется слитно (<code>#remote</code>), слово не может быть пустым.",
            escape(keyword)
        ),
        (Lang::En, InputError::BadKeyword { keyword }) => format!(
            "“{}” cannot be used: a hashtag is one word (<code>#remote</code>), a keyword cannot be empty.",
            escape(keyword)
        ),
        (Lang::Ru, InputError::QuietFormat) => {
            "Не понял интервал. Формат: <code>23:00-08:00 Europe/Moscow</code>.".to_owned()
        }
        (Lang::En, InputError::QuietFormat) => {
            "I could not read the window. Format: <code>23:00-08:00 Europe/London</code>.".to_owned()
        }
        (Lang::Ru, InputError::QuietTime(t)) => format!(
            "Время «{}» не существует: нужно ЧЧ:ММ от 00:00 до 23:59.",
            escape(t)
        ),
        (Lang::En, InputError::QuietTime(t)) => format!(
            "“{}” is not a time of day: use HH:MM from 00:00 to 23:59.",
            escape(t)
        ),
        (Lang::Ru, InputError::QuietZone(z)) => format!(
            "Неизвестный часовой пояс «{}». Укажите пояс как <code>Europe/Moscow</code>, <code>Asia/Almaty</code> или <code>UTC</code>.",
            escape(z)
        ),
        (Lang::En, InputError::QuietZone(z)) => format!(
            "Unknown time zone “{}”. Use a name such as <code>Europe/London</code>, <code>America/New_York</code> or <code>UTC</code>.",
            escape(z)
        ),
        (Lang::Ru, InputError::QuietNoZone) => {
            "Укажите часовой пояс: <code>23:00-08:00 Europe/Moscow</code>.".to_owned()
        }
        (Lang::En, InputError::QuietNoZone) => {
            "Add your time zone: <code>23:00-08:00 Europe/London</code>.".to_owned()
        }
        (Lang::Ru, InputError::QuietEmpty) => {
            "Начало и конец совпадают — такой интервал пуст.".to_owned()
        }
        (Lang::En, InputError::QuietEmpty) => {
            "Start and end are the same: that window is empty.".to_owned()
        }
        (Lang::Ru, InputError::BudgetFormat) => {
            "Не понял сумму. Примеры: <code>5000 руб</code>, <code>300 usd</code>, <code>50 $/час</code>.".to_owned()
        }
        (Lang::En, InputError::BudgetFormat) => {
            "I could not read the amount. Examples: <code>300 usd</code>, <code>50 $/h</code>, <code>5000 rub</code>.".to_owned()
        }
        (Lang::Ru, InputError::BudgetCurrency(c)) => format!(
            "Не знаю валюту «{}». Поддерживаются RUB, USD, EUR, GBP, UAH, KZT, USDT.",
            escape(c)
        ),
        (Lang::En, InputError::BudgetCurrency(c)) => format!(
            "Unknown currency “{}”. Supported: RUB, USD, EUR, GBP, UAH, KZT, USDT.",
            escape(c)
        ),
        (Lang::Ru, InputError::BudgetAmount) => {
            "Сумма должна быть больше нуля и разумной.".to_owned()
        }
        (Lang::En, InputError::BudgetAmount) => {
            "The amount must be above zero and sensible.".to_owned()
        }
    };
    format!(
        "❌ {why}\n{}",
        lang.pick(
            "Попробуйте ещё раз или /cancel для отмены.",
            "Try again, or /cancel."
        )
    )
}

// ---- category bots ----

pub fn category_started(lang: Lang, names: &[String], main_username: Option<&str>) -> String {
    let list = names
        .iter()
        .map(|n| format!("«{}»", escape(n)))
        .collect::<Vec<_>>()
        .join(", ");
    let settings = main_username.map_or_else(String::new, |m| match lang {
        Lang::Ru => format!("\nФильтры, тихие часы и пауза — в @{}.", escape(m)),
        Lang::En => format!("\nFilters, quiet hours and pause live in @{}.", escape(m)),
    });
    match lang {
        Lang::Ru => format!(
            "✅ Подписка включена: {list}. Новые вакансии будут приходить сюда.{settings}\n\n/stop — отписаться. Ответьте /wrong на сообщение, если это не вакансия или не та категория."
        ),
        Lang::En => format!(
            "✅ Subscribed: {list}. New jobs will arrive here.{settings}\n\n/stop unsubscribes. Reply /wrong to a message that is not a job or not of this category."
        ),
    }
}

pub fn category_stopped(lang: Lang, names: &[String]) -> String {
    let list = names
        .iter()
        .map(|n| format!("«{}»", escape(n)))
        .collect::<Vec<_>>()
        .join(", ");
    match lang {
        Lang::Ru => format!("🔕 Подписка выключена: {list}. /start — включить снова."),
        Lang::En => format!("🔕 Unsubscribed: {list}. /start subscribes again."),
    }
}

pub fn category_help(lang: Lang, names: &[String], main_username: Option<&str>) -> String {
    let list = names
        .iter()
        .map(|n| format!("«{}»", escape(n)))
        .collect::<Vec<_>>()
        .join(", ");
    let settings = main_username.map_or_else(String::new, |m| match lang {
        Lang::Ru => format!("\nНастройки — в @{}.", escape(m)),
        Lang::En => format!("\nSettings live in @{}.", escape(m)),
    });
    match lang {
        Lang::Ru => format!(
            "Этот бот присылает вакансии категорий {list}.\n/start — подписаться, /stop — отписаться.\nОтветьте /wrong на сообщение, если это не вакансия или не та категория.{settings}"
        ),
        Lang::En => format!(
            "This bot sends jobs of {list}.\n/start subscribes, /stop unsubscribes.\nReply /wrong to a message that is not a job or not of this category.{settings}"
        ),
    }
}

pub fn wrong_needs_reply(lang: Lang) -> String {
    lang.pick(
        "Ответьте командой /wrong на сообщение с вакансией, которая оказалась не вакансией или не той категории.",
        "Reply /wrong to the message with the job that is not a job or not of this category.",
    )
    .to_owned()
}

pub fn wrong_thanks(lang: Lang, id: i64) -> String {
    match lang {
        Lang::Ru => format!("🙏 Спасибо! Жалоба №{id} принята — такие сообщения будут реже."),
        Lang::En => format!("🙏 Thank you! Report #{id} is filed — you will see fewer of these."),
    }
}

/// The command menus: `(command, Russian description, English description)`.
pub const MAIN_COMMANDS: &[(&str, &str, &str)] = &[
    ("start", "Меню", "Menu"),
    ("categories", "Категории", "Categories"),
    ("filters", "Фильтры", "Filters"),
    ("status", "Мои настройки", "My settings"),
    ("pause", "Пауза", "Pause"),
    ("resume", "Возобновить", "Resume"),
    (
        "report",
        "Прислать пропущенную вакансию",
        "Send a missed job",
    ),
    ("cancel", "Отменить ввод", "Cancel input"),
    ("help", "Помощь", "Help"),
];

pub const CATEGORY_COMMANDS: &[(&str, &str, &str)] = &[
    ("start", "Подписаться", "Subscribe"),
    ("stop", "Отписаться", "Unsubscribe"),
    (
        "wrong",
        "Ответом на сообщение: это не вакансия",
        "As a reply: not a job",
    ),
    ("help", "Помощь", "Help"),
];

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn languages_and_amounts() {
        assert_eq!(Lang::from_code(None), Lang::Ru);
        assert_eq!(Lang::from_code(Some("ru")), Lang::Ru);
        assert_eq!(Lang::from_code(Some("uk-UA")), Lang::Ru);
        assert_eq!(Lang::from_code(Some("en")), Lang::En);
        assert_eq!(Lang::from_code(Some("de")), Lang::En);
        assert_eq!(amount(5000.0), "5\u{a0}000");
        assert_eq!(amount(150_000.0), "150\u{a0}000");
        assert_eq!(amount(12.5), "12.5");
        assert_eq!(amount(999.0), "999");
        assert_eq!(escape("<b>&\""), "&lt;b&gt;&amp;&quot;");
    }
}
