//! The command menus the bots register with Telegram (`setMyCommands`).

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
    ("plans", "Подписка и тарифы", "Subscription and plans"),
    ("paysupport", "Вопросы об оплате", "Payment support"),
    ("terms", "Условия", "Terms"),
    ("cancel", "Отменить ввод", "Cancel input"),
    ("help", "Помощь", "Help"),
];

/// The main bot's `/post`, registered when placements are on.
pub const POST_COMMAND: (&str, &str, &str) = ("post", "Разместить вакансию", "Post a vacancy");

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
