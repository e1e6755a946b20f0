//! The panel's words in English and Russian. Every text is a field, so a template cannot
//! name a text that one language lacks: it would not compile.

use axum::http::HeaderMap;

use crate::auth::{LANG_COOKIE, cookie};

macro_rules! texts {
    ($($field:ident: $en:expr, $ru:expr;)*) => {
        /// The panel's words in one language.
        #[derive(Debug)]
        pub struct Texts {
            /// `en` or `ru`.
            pub code: &'static str,
            $(pub $field: &'static str,)*
        }

        pub static EN: Texts = Texts { code: "en", $($field: $en,)* };
        pub static RU: Texts = Texts { code: "ru", $($field: $ru,)* };
    };
}

texts! {
    nav_dashboard: "Dashboard", "Сводка";
    nav_sources: "Sources", "Источники";
    nav_posts: "Posts", "Посты";
    nav_prompt: "Prompt", "Промпт";
    nav_categories: "Categories", "Категории";
    categories_intro: "Names are what subscribers see in the bots and on cards; descriptions are listed in the LLM prompt. Changes apply to every running process within seconds.", "Названия видят подписчики в ботах и карточках; описания попадают в промпт LLM. Изменения применяются во всех запущенных процессах за несколько секунд.";
    category_name: "Name", "Название";
    category_description: "Description (for the LLM)", "Описание (для LLM)";
    category_digest: "In the daily digest", "В ежедневном дайджесте";
    category_saved: "Saved:", "Сохранено:";
    category_changed: "Changed by", "Изменил";
    nav_reports: "Reports", "Жалобы";
    nav_placements: "Placements", "Размещения";
    nav_admins: "Admins", "Админы";
    nav_payments: "Payments", "Платежи";
    nav_plans: "Plans", "Тарифы";
    nav_broadcasts: "Broadcasts", "Рассылки";
    broadcasts_unavailable: "Broadcasts are not available in this process (no bots configured).", "Рассылки недоступны в этом процессе (боты не настроены).";
    broadcast_text: "Message (Telegram HTML: <b>, <i>, <a href>, …)", "Сообщение (HTML Telegram: <b>, <i>, <a href>, …)";
    language: "Language", "Язык";
    active_days: "Active in the last N days", "Активны за последние N дней";
    send: "Send", "Отправить";
    reaches: "Reaches chats:", "Дойдёт до чатов:";
    broadcast_history: "Broadcasts (progress refreshed every 2 s)", "Рассылки (ход обновляется каждые 2 с)";
    audience: "Audience", "Аудитория";
    left: "Left", "Осталось";
    pause: "Pause", "Пауза";
    resume: "Resume", "Продолжить";
    stop: "Stop", "Остановить";
    price_stars: "Price, Stars", "Цена, Stars";
    price_provider: "Price via provider (smallest unit)", "Цена через провайдера (в копейках)";
    days: "Days", "Дней";
    active_now: "Active now", "Активны сейчас";
    no_plans: "No plan is configured ([[billing.plans]]).", "Тарифы не настроены ([[billing.plans]]).";
    trial: "Trial", "Пробный период";
    plan_gone: "no longer configured", "больше не настроен";
    plan: "Plan", "Тариф";
    charge: "Charge id", "Id платежа";
    revenue_per_plan: "Revenue per plan (payments less refunds)", "Выручка по тарифам (платежи минус возвраты)";
    revenue_per_month: "Revenue per month", "Выручка по месяцам";
    reconciliation: "Found by reconciliation with Telegram", "Найдено сверкой с Telegram";
    card_buttons: "The buttons under the card", "Кнопки под карточкой";
    last_reconciliation: "Last reconciliation", "Последняя сверка";
    found: "found", "найдено";
    transactions_read: "Telegram transactions read", "прочитано транзакций Telegram";
    never: "never", "не было";
    reconciliation_hint: "Payments and refunds Telegram had and the ledger lacked, applied by the reconciliation (newest first).", "Платежи и возвраты, которые были у Telegram и не было в журнале; применены сверкой (сначала новые).";
    role: "Role", "Роль";
    sessions: "Sessions", "Сессии";
    created: "Created", "Создан";
    reset_password: "New password", "Новый пароль";
    add_admin: "Add an account (a password is generated and shown once)", "Добавить аккаунт (пароль создаётся и показывается один раз)";
    password_once: "Shown once; copy it now and give it to", "Показывается один раз; скопируйте и передайте";
    placements_queue: "Waiting for approval (oldest first)", "Ждут одобрения (сначала старые)";
    placements_history: "History", "История";
    no_placements: "No placement is waiting for approval.", "Нет размещений, ждущих одобрения.";
    employer: "Employer", "Работодатель";
    amount: "Paid", "Оплачено";
    approve: "Approve", "Одобрить";
    refuse: "Refuse and refund", "Отказать и вернуть деньги";
    refuse_reason: "Reason (the employer reads it)", "Причина (её прочтёт работодатель)";
    reach: "Reach", "Охват";
    refunded: "Refunded", "Возвращено";
    as_posted: "The card as subscribers will see it", "Карточка, как её увидят подписчики";
    nav_subscribers: "Subscribers", "Подписчики";
    nav_dead_letters: "Dead letters", "Сбои";
    nav_audit: "Audit log", "Журнал";
    logout: "Log out", "Выйти";
    login_title: "Log in to jobwire", "Вход в jobwire";
    username: "Username", "Имя";
    password: "Password", "Пароль";
    login: "Log in", "Войти";
    login_failed: "Wrong username or password.", "Неверное имя или пароль.";
    login_limited: "Too many failed attempts. Try again in a few minutes.", "Слишком много неудачных попыток. Попробуйте через несколько минут.";
    last_24h: "Last 24 h", "24 часа";
    last_7d: "Last 7 days", "7 дней";
    posts_read: "Posts read", "Прочитано постов";
    passed_rules: "Passed the rules", "Прошли правила";
    jobs: "Jobs", "Вакансии";
    llm_share: "LLM share", "Доля LLM";
    tokens: "Tokens", "Токены";
    latency: "Avg latency", "Средняя задержка";
    sent: "Sent", "Отправлено";
    failed: "Failed", "Ошибки";
    blocked: "Blocked", "Заблокировали";
    queued: "Queued", "В очереди";
    deliveries_pending: "Deliveries pending", "Ждут отправки";
    dead_letters: "Dead letters", "Сбои";
    subscribers_active: "Active subscribers", "Активные подписчики";
    trials: "Trials started", "Пробных периодов";
    revenue: "Revenue", "Выручка";
    per_source: "Posts per source", "Посты по источникам";
    per_category: "Jobs per category", "Вакансии по категориям";
    chart_posts: "Posts and jobs", "Посты и вакансии";
    chart_deliveries: "Deliveries per minute by outcome", "Доставки в минуту по исходу";
    spend: "LLM spend", "Расходы на LLM";
    llm_verdicts: "LLM verdicts", "Вердикты LLM";
    sent_per_min: "Sent per minute", "Отправок в минуту";
    bot_429: "Bot API 429s", "Ответы 429 Bot API";
    flood_waits: "Flood waits", "Флуд-ожидания";
    awaiting_fanout: "Awaiting fan-out", "Ждут рассылки";
    deliveries_held: "Held (quiet hours)", "Отложены (тихие часы)";
    chart_llm: "LLM share and latency", "Доля LLM и задержка";
    chart_usage: "LLM tokens and spend", "Токены и расходы LLM";
    chart_waits: "Telegram's 429s and flood waits", "Ответы 429 и флуд-ожидания Telegram";
    telegram_waits: "Telegram's waits by bot and account", "Ожидания Telegram по ботам и аккаунтам";
    wait_429: "429 Too Many Requests (Bot API)", "429 Too Many Requests (Bot API)";
    wait_flood: "Flood wait (MTProto account)", "Флуд-ожидание (аккаунт MTProto)";
    bot_or_account: "Bot or account", "Бот или аккаунт";
    times: "Times", "Раз";
    waited_secs: "Asked to wait, s", "Просили ждать, с";
    by_time: "By time", "По времени";
    bucket: "step", "шаг";
    step_30min: "30 min", "30 мин";
    step_3h: "3 h", "3 ч";
    source: "Source", "Источник";
    title: "Title", "Название";
    kind: "Kind", "Тип";
    enabled: "Enabled", "Включён";
    disabled: "Disabled", "Выключен";
    include_rules: "Include (one term per line)", "Включать (по одному на строку)";
    exclude_rules: "Exclude (one term per line)", "Исключать (по одному на строку)";
    add_source: "Add a source", "Добавить источник";
    add_source_hint: "A Telegram @username, an invite link (https://t.me/+…) or a feed URL (https://…)", "Telegram @username, ссылка-приглашение (https://t.me/+…) или адрес ленты (https://…)";
    add: "Add", "Добавить";
    feed_name: "Feed name", "Имя ленты";
    feed_interval: "Poll every (s)", "Опрос раз в (с)";
    feed_only: "Feeds only", "Только для лент";
    save: "Save", "Сохранить";
    edit: "Edit", "Изменить";
    enable: "Enable", "Включить";
    disable: "Disable", "Выключить";
    remove: "Remove", "Удалить";
    preview: "Preview", "Проверить";
    preview_title: "Its last 200 posts under these rules", "Последние 200 постов по этим правилам";
    would_pass: "would pass", "пройдут";
    no_posts: "No posts yet.", "Постов пока нет.";
    status: "Status", "Статус";
    last_post: "Last post", "Последний пост";
    posts_per_day: "Posts/day", "Постов в день";
    job_share: "Real jobs", "Доля вакансий";
    last_error: "Last error", "Последняя ошибка";
    joined: "Joined", "Подписан";
    search: "Search", "Искать";
    text: "Text", "Текст";
    category: "Category", "Категория";
    any: "any", "любая";
    from_date: "From", "С";
    to_date: "To", "По";
    older: "Older", "Дальше";
    posted: "Posted", "Опубликован";
    trace: "Trace", "Путь";
    rules_matched: "Rules", "Правила";
    duplicate_of: "Duplicate of", "Дубль поста";
    classification: "Classification", "Классификация";
    route: "Route", "Маршрут";
    model: "Model", "Модель";
    prompt_version: "Prompt version", "Версия промпта";
    confidence: "Confidence", "Уверенность";
    deliveries: "Deliveries", "Доставки";
    subscriber: "Subscriber", "Подписчик";
    bot: "Bot", "Бот";
    message_ids: "Message ids", "Id сообщений";
    error: "Error", "Ошибка";
    not_classified: "Not classified yet.", "Ещё не классифицирован.";
    no_deliveries: "No deliveries.", "Доставок нет.";
    relabel: "Re-label", "Переразметить";
    is_job: "A job", "Вакансия";
    categories: "Categories", "Категории";
    reports: "Reports", "Жалобы";
    pending: "Pending", "Ждут решения";
    accept: "Accept", "Принять";
    dismiss: "Dismiss", "Отклонить";
    post: "Post", "Пост";
    reported_at: "Reported", "Получена";
    no_reports: "No reports waiting.", "Жалоб нет.";
    reports_per_source: "Reports per source", "Жалобы по источникам";
    chat: "Chat", "Чат";
    name: "Name", "Имя";
    paused: "Paused", "На паузе";
    subscription: "Subscription", "Подписка";
    ends: "Ends", "До";
    payments: "Payments", "Платежи";
    blocked_bots: "Blocked bots", "Заблокированные боты";
    recent_deliveries: "Recent deliveries", "Последние доставки";
    topic: "Topic", "Тема";
    reason: "Reason", "Причина";
    attempts: "Attempts", "Попыток";
    when: "When", "Когда";
    who: "Who", "Кто";
    action: "Action", "Действие";
    target: "Target", "Объект";
    detail: "Detail", "Подробности";
    nothing: "Nothing here.", "Здесь пусто.";
    saved: "Saved.", "Сохранено.";
    prompt_current: "Current prompt", "Текущий промпт";
    prompt_versions: "Versions", "Версии";
    prompt_built_in: "built in (prompts/classify.v5.md)", "встроенный (prompts/classify.v5.md)";
    prompt_is_current: "current", "текущая";
    prompt_created: "Written", "Написана";
    prompt_activated: "Made current", "Сделана текущей";
    prompt_make_current: "Make current", "Сделать текущей";
    prompt_edit_copy: "Edit a copy", "Править копию";
    prompt_new: "A new version", "Новая версия";
    prompt_name_hint: "Letters, digits, dots, dashes; e.g. classify.v6. Verdicts record it.", "Буквы, цифры, точки, дефисы; например classify.v6. Её пишут в каждый вердикт.";
    prompt_text: "Prompt", "Промпт";
    prompt_text_hint: "Must contain {{categories}} (the category list) and {{reason}} (the rule for reasons); Post:/Answer: pairs are examples.", "Должен содержать {{categories}} (список категорий) и {{reason}} (правило для причин); пары Post:/Answer: — примеры.";
    prompt_save: "Save as a new version", "Сохранить новой версией";
    prompt_try_title: "Try it", "Проверить";
    prompt_try_post: "Post id", "Id поста";
    prompt_try_text: "or a pasted text", "или вставленный текст";
    prompt_try_with: "With", "С промптом";
    prompt_try_edited: "the text being edited", "редактируемый текст";
    prompt_try: "Try", "Проверить";
    prompt_try_unavailable: "Trying is not available: no LLM is configured (the [llm] section).", "Проверка недоступна: LLM не настроена (раздел [llm]).";
    prompt_answer: "The model's answer", "Ответ модели";
    prompt_verdict: "Verdict", "Вердикт";
    prompt_unreadable: "The answer cannot be read", "Ответ не читается";
    prompt_created_flash: "Saved as a new version (not current yet).", "Сохранено новой версией (пока не текущая).";
    prompt_activated_flash: "The classifier uses this version within seconds.", "Классификатор перейдёт на эту версию за несколько секунд.";
    live: "Live", "Обновляется";
    reclassify: "Classify again", "Классифицировать заново";
    reclassify_hint: "The classifier takes it again within seconds.", "Классификатор возьмёт его снова за несколько секунд.";
    redeliver: "Send failed deliveries again", "Повторить неудачные доставки";
    retry: "Retry", "Повторить";
    extend: "Extend", "Продлить";
    extend_days: "Days", "Дней";
    end_now: "End the subscription now", "Завершить подписку сейчас";
    refund: "Refund", "Вернуть";
    discard: "Discard", "Удалить";
}

/// The language of a request: the `jw_lang` cookie, else the browser's first choice of
/// `ru` or `en`, else English.
pub fn lang(headers: &HeaderMap) -> &'static Texts {
    if let Some(code) = cookie(headers, LANG_COOKIE) {
        return by_code(code);
    }
    let accept = headers
        .get(axum::http::header::ACCEPT_LANGUAGE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    for part in accept.split(',') {
        let tag = part
            .split(';')
            .next()
            .unwrap_or("")
            .trim()
            .to_ascii_lowercase();
        if tag.starts_with("ru") {
            return &RU;
        }
        if tag.starts_with("en") {
            return &EN;
        }
    }
    &EN
}

/// `ru` gives Russian; anything else English.
pub fn by_code(code: &str) -> &'static Texts {
    if code.eq_ignore_ascii_case("ru") {
        &RU
    } else {
        &EN
    }
}
