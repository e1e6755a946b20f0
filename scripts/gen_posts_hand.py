"""Posts written one by one for data/train.jsonl (not composed from the banks): each in the
genre of a real channel and unlike the others, so that the training data also shows the
long tail of hand-written wording the composed posts lack. Tuples of (channel, kind,
categories, lang, text); scripts/gen_posts.py appends them to data/train.jsonl with ids
h001, h002, … None of these channels is in data/dev.jsonl or data/unseen.jsonl, and no line
of data/dev.jsonl was copied.
"""

# (channel, kind, categories, lang, text)
B1 = [
("@zakazy_msk_frilans", "job", ["web"], "ru", "Кто возьмётся перенести сайт стоматологии с Wix на WordPress? Страниц около 15, формы записи должны работать как раньше. Бюджет 25-30к, срок две недели. Пишите @dent_smile_admin"),
("@zakazy_msk_frilans", "job", ["design", "marketing"], "ru", "Ищем человека, который сделает карточки для Озона (8 товаров, кухонные ножи) и заодно поправит нам SEO-описания, чтобы выйти из поиска на 5 странице. Оплата по результату обсудим, ориентир 15 тыс. Контакт в профиле канала"),
("@zakazy_msk_frilans", "resume", [], "ru", "Добрый день! Я верстальщик, 4 года опыта, HTML/CSS/JS, адаптив, пиксель-перфект. Беру проекты от 5000 р. Примеры работ скину в личку. Пишите @verstka_nastya"),
("@zakazy_msk_frilans", "chatter", [], "ru", "Народ, заказчик пропал после сдачи макета, предоплата была 30%. Имеет смысл писать претензию или забить?"),
("@zakazy_msk_frilans", "job", ["assistant"], "ru", "Нужна помощница на звонки: обзвонить базу из 200 салонов красоты, узнать, кто принимает решения по закупкам, занести в таблицу. 40 р за контакт, скрипт дадим. @beauty_opt_hr"),
("@zakazy_msk_frilans", "ad", [], "ru", "Хотите зарабатывать на фрилансе от 100к? Бесплатный вебинар в четверг: как найти первых клиентов без портфолио. Регистрация по ссылке в шапке канала 🔥"),
("@zakazy_msk_frilans", "job", ["video"], "ru", "Срочно!!! нужен монтаж свадебного ролика, исходники 40 минут, на выходе клип 3-4 минуты под музыку. Сдать до пятницы, плачу 6000"),
("@zakazy_msk_frilans", "job", ["data"], "ru", "Требуется разобрать выгрузку из 1С (около 3 тыс строк) и свести в сводную таблицу по менеджерам и месяцам, плюс пару графиков. Разово, 3500₽. В ЛС"),
("@zakazy_msk_frilans", "chatter", [], "ru", "Сколько сейчас адекватно брать за лендинг на тильде? Мне предлагают 8к и кажется это мало"),

("@rabota_v_seti_chat", "ad", [], "ru", "Работа на дому! Ставишь лайки и пишешь отзывы, платим от 2500 в день. Нужен только телефон. Пиши + в комментарии и я вышлю инструкцию"),
("@rabota_v_seti_chat", "chatter", [], "ru", "девочки кто работал модератором в чатах, сколько часов в день реально уходит? вроде пишут 2-3 часа а по факту?"),
("@rabota_v_seti_chat", "job", ["assistant"], "ru", "Ищу модератора в наш чат по рукоделию (5 тыс участников). Удалять спам, отвечать на вопросы по правилам, вечером 2 часа. Оплата 12 000 в месяц. Пишите @vyazanie_club"),
("@rabota_v_seti_chat", "resume", [], "ru", "Ищу подработку! Могу набирать тексты, делать расшифровку аудио, заполнять таблицы. Скорость печати 350 зн/мин, грамотная. Рассмотрю любые предложения @katya_udalenka"),
("@rabota_v_seti_chat", "job", ["texts"], "ru", "нужен человек расшифровать 6 интервью (по 40-50 минут) в текст, с таймкодами не надо. платим 100р за минуту аудио"),
("@rabota_v_seti_chat", "ad", [], "ru", "Подпишись на наш канал с вакансиями — каждый день 50+ предложений удалённой работы без опыта 👉 @udalenka_top_vakansii"),
("@rabota_v_seti_chat", "chatter", [], "ru", "Админ, а можно тут публиковать резюме или только вакансии? В правилах не нашла"),
("@rabota_v_seti_chat", "job", ["marketing"], "ru", "Ищем человека вести наш инстаграм и вк: 3 поста в неделю, сторис каждый день, отвечать в директ. Магазин детской одежды. 15к/мес. Анкета по ссылке forms.gle/kids_smm"),
("@rabota_v_seti_chat", "ad", [], "ru", "🚨 Требуются сотрудники в онлайн-проект! Доход 80 000 руб. в месяц, обучение бесплатное, опыт не нужен. Пишите слово РАБОТА в лс"),

("@dizain_zakazy_pro", "job", ["design"], "ru", "Нужен логотип для кофейни у дома. Хотим что-то тёплое, без чашек и зёрен 🙃 Бюджет 7000, 3 варианта на выбор. Присылайте портфолио в @kofe_ryadom"),
("@dizain_zakazy_pro", "job", ["design"], "ru", "#заказ Презентация для инвесторов, 14 слайдов, текст и цифры готовы, нужно красиво упаковать в Figma + экспорт в PDF. 12 000₽, срок 5 дней"),
("@dizain_zakazy_pro", "resume", [], "ru", "#портфолио UX/UI дизайнер, делаю интерфейсы мобильных приложений и дашборды. Figma, прототипы, дизайн-системы. Behance: behance.net/ux_lena. Открыта к проектам"),
("@dizain_zakazy_pro", "job", ["design", "web"], "ru", "Ищем дизайнера+верстальщика в одном лице: одностраничник для юриста по банкротству, дизайн в фигме и собрать на Тильде. До 30к. Отклики с примерами в лс @urist_bankrot"),
("@dizain_zakazy_pro", "chatter", [], "ru", "Кто как ведёт правки? Клиент прислал уже 11-й круг, в договоре было 3. Как вежливо сказать что дальше платно?"),
("@dizain_zakazy_pro", "job", ["design"], "ru", "Нужно нарисовать 20 иконок в едином стиле для приложения банка (линейные, 24px). Есть гайд. Оплата 1000₽ за иконку"),
("@dizain_zakazy_pro", "ad", [], "ru", "Курс «Дизайнер маркетплейсов с нуля» — старт 15 числа. Первые 10 учеников получают скидку 40% и шаблоны в подарок. Подробнее: dizain-mp.ru"),
("@dizain_zakazy_pro", "job", ["design", "video"], "ru", "Нужна обложка для YouTube-канала и 10 превью под ролики + короткая анимация заставки на 5 секунд. Бюджет обсуждаем, пишите кто делает и то и другое"),
("@dizain_zakazy_pro", "resume", [], "ru", "Иллюстратор, рисую детские книги и стикеры для телеграма. Процедура: эскиз → цвет → финал. Цены от 2000 за иллюстрацию. Работы: @risuet_masha"),

("@tg_razrabotka_ru", "job", ["bots"], "ru", "Нужен бот для записи на маникюр: выбор мастера, свободные окна из Google Календаря, напоминание за день. Готов заплатить 15-20к. Кто делал подобное — пишите"),
("@tg_razrabotka_ru", "job", ["bots", "ai"], "ru", "Задача: телеграм-бот, который отвечает клиентам по базе знаний (около 50 документов) через GPT, с передачей оператору если не знает ответ. Бюджет до 80к, нужен опыт с RAG"),
("@tg_razrabotka_ru", "chatter", [], "ru", "aiogram 3 или pyTelegramBotAPI для новичка? Хочу сделать себе бота-напоминалку"),
("@tg_razrabotka_ru", "resume", [], "ru", "Разрабатываю ботов на Python (aiogram), подключаю оплату через ЮKassa и Telegram Stars, админки, рассылки. Сроки от 3 дней. Кейсы в канале @botmaker_vlad"),
("@tg_razrabotka_ru", "job", ["bots"], "ru", "Ищу разработчика: парсер объявлений с Авито по нескольким категориям с фильтром по цене, результат присылать в телеграм каждые 15 минут. Оплата 10 000 ₽"),
("@tg_razrabotka_ru", "job", ["bots", "web"], "ru", "Нужна мини-апп в телеграме для заказа еды из нашей пекарни: каталог, корзина, оплата, и админка на сайте для управления меню. Вилка 100-150к, сроки месяц"),
("@tg_razrabotka_ru", "chatter", [], "ru", "Кто-нибудь сталкивался, что бот перестаёт получать апдейты после 24 часов работы? вебхук стоит, сертификат норм"),
("@tg_razrabotka_ru", "ad", [], "ru", "Хостинг для ботов от 99₽/мес, 24/7 аптайм, деплой в один клик. Промокод BOT50 на первый месяц. bothost.example"),
("@tg_razrabotka_ru", "job", ["bots", "data"], "ru", "Нужен скрипт, который раз в сутки забирает заказы из API Wildberries и складывает в гугл-таблицу по артикулам. Плачу 7к, можно быстро"),
]

B2 = [
("@kopirayting_vakansii", "job", ["texts"], "ru", "Ищу автора в блог про ремонт квартир: 8 статей в месяц по 6-8 тыс знаков, ТЗ с ключами даём. 1,2 р за знак. Тестовое оплачиваемое. Писать @remont_blog_red"),
("@kopirayting_vakansii", "job", ["texts", "marketing"], "ru", "Нужен копирайтер, который умеет в SEO: переписать 30 карточек категорий интернет-магазина сантехники под ключевые запросы, плюс мета-теги. 20 тыс. за всё"),
("@kopirayting_vakansii", "resume", [], "ru", "Пишу тексты для экспертов: посты, лонгриды, прогревы для запусков. 6 лет в копирайтинге, работала с психологами и нутрициологами. Пост от 1500₽. Отзывы — в закрепе @text_olesya"),
("@kopirayting_vakansii", "chatter", [], "ru", "Как вы относитесь к тому, что заказчики просят «написать как будто человек, а не нейросеть» за 50 рублей за тысячу?"),
("@kopirayting_vakansii", "job", ["texts"], "ru", "Требуется редактор-корректор для книги (нон-фикшн, 180 страниц), вычитка и стилистическая правка. Готовы заплатить 25 000"),
("@kopirayting_vakansii", "job", ["texts", "video"], "ru", "Ищем сценариста для коротких роликов (рилс/шортс) для бренда косметики: 12 сценариев в месяц + помощь на монтаже по таймингу. 18к/мес"),
("@kopirayting_vakansii", "ad", [], "ru", "Марафон «Копирайтинг за 7 дней» — последние 3 места по старой цене. Пишите «хочу» в комментариях"),
("@kopirayting_vakansii", "chatter", [], "ru", "Подскажите сервис проверки уникальности, который нормально работает с длинными текстами? text.ru стал лагать"),

("@montazh_i_motion", "job", ["video"], "ru", "Нужен моушн-дизайнер: анимированный ролик про наше приложение, 45 секунд, 2D, сценарий и озвучка есть. Бюджет 35к. Референсы скину"),
("@montazh_i_motion", "job", ["video", "audio"], "ru", "Ищу монтажёра на подкаст: чистка звука, склейка двух камер, субтитры. 2 выпуска в неделю по часу. Оплата 3000 за выпуск"),
("@montazh_i_motion", "resume", [], "ru", "Монтирую рилс и клипы, After Effects, Premiere, цветокор. Шоурил по ссылке vimeo.com/montazh_dima. Свободен с понедельника"),
("@montazh_i_motion", "chatter", [], "ru", "Что лучше для вертикальных роликов — CapCut на компе или всё-таки Premiere? Для клиента делаю по 20 роликов в неделю"),
("@montazh_i_motion", "job", ["video"], "ru", "нужна нарезка стрима на шортсы, 10 штук с субтитрами, стрим 3 часа. 300р за шортс"),
("@montazh_i_motion", "ad", [], "ru", "Продаю пак переходов и LUT'ов для Premiere — 500 эффектов за 990₽. Ссылка на оплату в описании"),
("@montazh_i_motion", "job", ["video", "design"], "ru", "Открыт проект: анимация логотипа (3-5 секунд) + оформление заставок для вебинаров в едином стиле. Пишите с портфолио @event_studio_hr"),

("@ozvuchka_castings", "job", ["audio"], "ru", "Кастинг! Ищем мужской голос для озвучки рекламы автосалона, 30 секунд, тембр низкий, уверенный. Оплата 5000 за ролик, права на год. Демо в лс"),
("@ozvuchka_castings", "job", ["audio", "translation"], "ru", "Нужен диктор с английским на уровне носителя: перевести и озвучить 10-минутное обучающее видео с русского. Оплата договорная"),
("@ozvuchka_castings", "resume", [], "ru", "Женский голос, тёплый тембр, записываю из домашней студии (Neumann, акустика). Аудиокниги, IVR, рекламные ролики. Демо: @golos_irina"),
("@ozvuchka_castings", "job", ["audio"], "ru", "Требуется звукорежиссёр: свести и отмастерить 4 трека (поп-рок), стемы готовы. Бюджет 16 тыс"),
("@ozvuchka_castings", "chatter", [], "ru", "Какой микрофон посоветуете для старта в озвучке до 15к? Смотрю на AT2020"),
("@ozvuchka_castings", "job", ["audio"], "ru", "Нужна музыка для мобильной игры: 3 фоновых лупа и 15 звуковых эффектов в мультяшном стиле. $400. Пишите @tiny_games_lead"),

("@marketplace_pomosh", "job", ["marketing"], "ru", "Ищем менеджера маркетплейсов на ВБ: вести 40 артикулов, ставки в рекламе, отвечать на отзывы, следить за остатками. Удалённо, 35к + % от роста"),
("@marketplace_pomosh", "job", ["design"], "ru", "Инфографика на WB: 6 слайдов для одного товара (массажёр), фото есть. 3500₽. Отклики с примерами"),
("@marketplace_pomosh", "job", ["data"], "ru", "Нужно собрать данные о конкурентах на Озоне: 100 карточек, цены, отзывы, рейтинг — в Excel. Оплата 2500"),
("@marketplace_pomosh", "resume", [], "ru", "Менеджер маркетплейсов, вывела 3 бренда в топ-10 категории. Беру на ведение кабинет WB/Ozon. Аналитика, реклама, SEO карточек. @mp_manager_alina"),
("@marketplace_pomosh", "ad", [], "ru", "Сервис аналитики WB — 7 дней бесплатно! Узнай продажи конкурентов и найди свою нишу. Регистрация: mpstat.example"),
("@marketplace_pomosh", "chatter", [], "ru", "У кого упали продажи после изменения алгоритма выдачи на ВБ на прошлой неделе? У нас минус 40%"),
("@marketplace_pomosh", "job", ["texts", "marketing"], "ru", "Требуется SEO-описание для 25 товаров на Ozon (постельное бельё), с подбором ключей. По 250 р за описание"),

("@nocode_zakazy", "job", ["web", "bots"], "ru", "Собрать на Make автоматизацию: заявки с сайта на Тильде → AmoCRM → уведомление в телеграм менеджеру. Думаю, работы на вечер. 5000₽"),
("@nocode_zakazy", "job", ["web"], "ru", "Нужен специалист по Bubble: доделать MVP сервиса бронирования (личный кабинет, платежи Stripe). Почасовая оплата, 1500₽/час"),
("@nocode_zakazy", "chatter", [], "ru", "Тильда или Webflow для портфолио дизайнера? Тильда дешевле, но Webflow гибче"),
("@nocode_zakazy", "resume", [], "ru", "Делаю сайты на Тильде под ключ: дизайн, Zero-блок, анимации, подключение оплаты. Срок 5-7 дней, от 15к. Портфолио tilda-master.example"),
("@nocode_zakazy", "job", ["data", "assistant"], "ru", "Ищу помощника, который настроит нам Notion для команды из 6 человек: база задач, CRM клиентов, шаблоны отчётов, и потом месяц будет поддерживать. 20к"),
]

B3 = [
("@gigboard_daily", "job", ["web"], "en", "Looking for a Webflow dev to rebuild our pricing page and hook up the CMS for a blog. Figma is ready. ~$600 fixed, need it within 10 days. Email hello@northpine.io"),
("@gigboard_daily", "job", ["mobile"], "en", "React Native dev needed to fix push notifications on iOS (they work on Android) and ship an update to TestFlight. Paying $45/hr, probably 10-15 hours."),
("@gigboard_daily", "job", ["data"], "en", "Need someone to clean up a messy CRM export (12k rows) — dedupe contacts, standardize phone numbers and company names, flag missing emails. Google Sheets. $200 flat."),
("@gigboard_daily", "resume", [], "en", "Full-stack dev (Next.js, Postgres, Stripe) with 6 yrs experience. Available for 20 hrs/week from next month. Portfolio: devfolio.example/jamie — DMs open"),
("@gigboard_daily", "ad", [], "en", "Tired of low-paying gigs? Our Freelance Accelerator teaches you to land $5k clients in 30 days. Enrollment closes Friday → link in bio"),
("@gigboard_daily", "job", ["design"], "en", "We need a pitch deck designed — 18 slides, content written, brand colors set. Keynote or Figma both fine. Budget $450. Send past decks to @seedround_kate"),
("@gigboard_daily", "chatter", [], "en", "Anyone else getting scammed with fake 'check' payments lately? Client wanted me to buy software from 'their vendor' first"),
("@gigboard_daily", "job", ["marketing"], "en", "Hiring a Google Ads specialist to audit our account (spend ~$8k/mo, ROAS dropping) and restructure campaigns. Fixed $700 for the audit, ongoing work possible."),
("@gigboard_daily", "job", ["translation"], "en", "Need a native Spanish translator for our SaaS onboarding emails (9 emails, ~2,500 words). Must keep the tone casual. $0.08/word."),

("@remote_creatives", "job", ["video"], "en", "Editor wanted for a travel YouTube channel — 2 videos a month, 15-20 min each, color grading + sound design + some motion graphics. $350/video. Send your reel!"),
("@remote_creatives", "job", ["design"], "en", "Children's book illustrator wanted: 24 full-page spreads, watercolor style, manuscript ready. Budget around $3,000, flexible for the right artist."),
("@remote_creatives", "resume", [], "en", "Hi all 👋 I'm a motion designer (AE, Cinema 4D). Explainers, logo animations, product promos. Reel: vimeo.com/ana_motion. Booking for March"),
("@remote_creatives", "chatter", [], "en", "How do you guys handle clients who want the raw project files? Do you charge extra for them?"),
("@remote_creatives", "job", ["audio"], "en", "Looking for a composer to write a 60-sec upbeat track for our app launch video. Needs full buyout. $300-500."),
("@remote_creatives", "ad", [], "en", "🎨 Procreate brush bundle — 300 brushes for $12 (80% off today only). Grab it at brushes.example"),
("@remote_creatives", "job", ["design", "marketing"], "en", "Small skincare brand looking for someone to design our Instagram grid templates AND plan a month of content. $800 total. DM @glowlab_hq"),
("@remote_creatives", "job", ["ai", "design"], "en", "We need AI-generated product lifestyle shots (Midjourney or SD) for 15 candles, then retouched in Photoshop to look real. $25 per image."),

("@nomad_freelance_chat", "chatter", [], "en", "Currently in Lisbon, anyone around for a coworking day this week? ☕"),
("@nomad_freelance_chat", "chatter", [], "en", "What do you use to invoice international clients? Wise keeps flagging my account"),
("@nomad_freelance_chat", "job", ["assistant"], "en", "Need a VA for about 10 hrs/week: inbox zero, scheduling calls across 3 time zones, booking travel. $12/hr to start. Tell me your timezone."),
("@nomad_freelance_chat", "resume", [], "en", "Freelance copywriter here — I write landing pages and email sequences for SaaS. Recent win: +34% trial signups for a fintech. Open to 2 new clients. @copy_by_lou"),
("@nomad_freelance_chat", "ad", [], "en", "Join our private nomad community: weekly job drops, visa guides, meetups. First month free with code NOMAD"),
("@nomad_freelance_chat", "job", ["texts"], "en", "Looking for a ghostwriter for LinkedIn posts — 3 posts/week for a B2B founder in logistics. $600/month. Writing samples please."),
("@nomad_freelance_chat", "chatter", [], "en", "Is Upwork worth it in 2026 or is everyone moving to direct clients via LinkedIn?"),

("@startup_help_wanted", "job", ["mobile"], "en", "Pre-seed startup needs a Flutter dev to build an MVP: login, feed, chat, in-app purchases. Equity + $3k. 6-8 weeks."),
("@startup_help_wanted", "job", ["ai", "bots"], "en", "Need someone to build a Slack bot that summarizes long threads with an LLM and posts daily digests. Budget $1,200, Python preferred."),
("@startup_help_wanted", "job", ["data"], "en", "Looking for a data analyst to build a Metabase dashboard on top of our Postgres: MRR, churn, cohort retention. ~$900."),
("@startup_help_wanted", "chatter", [], "en", "Looking for a technical cofounder — no budget, equity only, we'll build the next Uber for dog walking 🐕"),
("@startup_help_wanted", "ad", [], "en", "We're a dev agency with 40+ engineers. MVP in 6 weeks, fixed price. Book a free call: agency.example/call"),
("@startup_help_wanted", "job", ["web", "design"], "en", "Need a landing page for our waitlist: design + build (Framer is fine). Should be live next week. $1,000."),
("@startup_help_wanted", "resume", [], "en", "ML engineer (PyTorch, LLM fine-tuning, RAG). Ex-FAANG. Taking short contracts, $120/hr. Happy to chat: @ml_raj"),

("@ugc_creators_hub", "job", ["video", "marketing"], "en", "Brand deal: looking for 5 UGC creators (women 25-40) to film unboxing + review videos for our protein bars. $150 per video + free product."),
("@ugc_creators_hub", "resume", [], "en", "UGC creator, 28, fitness & wellness niche. Hooks that convert, raw iPhone style or polished. Rates from $120/video. Portfolio in bio"),
("@ugc_creators_hub", "chatter", [], "en", "How much do you charge for usage rights on paid ads? A brand wants 12 months and I have no idea"),
("@ugc_creators_hub", "ad", [], "en", "Get brand deals on autopilot 🤑 Our UGC platform connects you with 2,000+ brands. Sign up free today"),
("@ugc_creators_hub", "job", ["video"], "en", "Need someone to edit 20 TikToks from raw footage (we film ourselves): captions, cuts, trending audio. $15 each, weekly batches."),
]

B4 = [
("@va_lounge", "job", ["assistant"], "en", "Seeking a customer support rep for our Shopify store — answer tickets in Gorgias, process returns, 4 hrs/day, weekdays. $8/hr, Philippines timezone OK."),
("@va_lounge", "job", ["assistant", "marketing"], "en", "Need an assistant who can also schedule our social posts in Buffer and reply to comments. 15 hrs/week, $10/hr."),
("@va_lounge", "resume", [], "en", "Experienced executive assistant (7 yrs) — calendar, travel, CRM hygiene, light bookkeeping in QuickBooks. Available EST hours. @ea_maria"),
("@va_lounge", "chatter", [], "en", "New VA here. Is it normal for clients to ask for a 'free trial week'? Feels off"),
("@va_lounge", "job", ["assistant", "data"], "en", "Looking for a lead gen VA: find 300 real estate agents in Florida on LinkedIn, collect emails, add to our Google Sheet. $0.30 per lead."),
("@va_lounge", "ad", [], "en", "Become a certified Virtual Assistant in 2 weeks! Our course + job board access for only $49 (was $199)"),
("@va_lounge", "job", ["assistant"], "en", "Cold caller wanted for a roofing company in Texas — booking inspections, commission + $5/hr base. Native-level English required."),

("@devs_for_hire_en", "resume", [], "en", "iOS developer, Swift/SwiftUI, 9 apps shipped, one featured by Apple. Looking for contract work, 30 hrs/wk. GitHub: github.com/leo-ios"),
("@devs_for_hire_en", "resume", [], "en", "Need a website? I build fast WordPress sites with Elementor, from $300. 50+ happy clients. DM me for a quote 🚀"),
("@devs_for_hire_en", "job", ["web"], "en", "Bug fix needed: our WooCommerce checkout throws a 500 error after the latest plugin update. Need someone today, $100."),
("@devs_for_hire_en", "chatter", [], "en", "What's your hourly rate as a mid-level React dev in Eastern Europe? Trying to figure out if I'm underpricing"),
("@devs_for_hire_en", "job", ["bots"], "en", "Need a Discord bot for our server: verification, role assignment via reactions, and a ticket system. $250."),
("@devs_for_hire_en", "job", ["mobile", "web"], "en", "Looking for a dev to build an admin panel (React) and an Android app (Kotlin) for our laundry pickup service. Budget $6k, phased payments."),
("@devs_for_hire_en", "ad", [], "en", "Hire vetted developers in 48 hours — top 3% talent. No fees until you hire. talentpool.example"),

("@localization_guild", "job", ["translation"], "en", "Game localization EN→DE, ~18,000 words of UI strings and dialogue, CAT tool provided (memoQ). Rate $0.07/word. Deadline in 3 weeks."),
("@localization_guild", "job", ["translation", "audio"], "en", "Need Portuguese (BR) subtitles and a voice-over for a 12-minute corporate video. Please quote both separately."),
("@localization_guild", "resume", [], "en", "Certified translator JA↔EN, legal and medical. 10+ yrs. Trados user. Rates on request: @tomoko_translates"),
("@localization_guild", "chatter", [], "en", "Agencies paying $0.03/word with MTPE should be illegal. Am I wrong?"),
("@localization_guild", "job", ["translation"], "en", "Looking for a proofreader for French marketing copy already translated — 5,000 words, $150."),

("@perevodchiki_ru", "job", ["translation"], "ru", "Требуется перевод инструкции к оборудованию с китайского на русский, 40 страниц, техническая лексика. Ставка обсуждается, срок 10 дней"),
("@perevodchiki_ru", "job", ["translation"], "ru", "Нужен нотариальный перевод диплома и приложения на английский, Москва. Сколько стоит и за сколько сделаете?"),
("@perevodchiki_ru", "resume", [], "ru", "Переводчик английского и немецкого, тематика IT и маркетинг, локализация сайтов и приложений. 450 р за 1800 знаков. @perevod_sergey"),
("@perevodchiki_ru", "chatter", [], "ru", "Коллеги, что думаете про DeepL для черновика — признаётесь заказчику или нет?"),
("@perevodchiki_ru", "job", ["translation", "texts"], "ru", "Ищем переводчика-редактора: перевести с английского 12 статей для блога и адаптировать под российскую аудиторию (не дословно). 1000 р за статью"),
("@perevodchiki_ru", "ad", [], "ru", "Школа переводчиков «Лингво Про» набирает группу на курс аудиовизуального перевода. Скидка 20% до конца месяца"),

("@ai_zakazy_neiro", "job", ["ai"], "ru", "Нужно обучить LoRA на лицо нашего бренд-персонажа, чтобы генерить его в разных сценах в Stable Diffusion. Оплата 15 000₽"),
("@ai_zakazy_neiro", "job", ["ai", "texts"], "ru", "Ищу промпт-инженера: настроить GPT под написание описаний недвижимости в нашем стиле, чтобы менеджеры копировали и вставляли. 10к"),
("@ai_zakazy_neiro", "job", ["ai", "video"], "ru", "Надо сгенерировать рекламный ролик в нейросетях (Kling/Runway) на 20 секунд про доставку цветов и смонтировать с музыкой. Бюджет 12 тыс"),
("@ai_zakazy_neiro", "resume", [], "ru", "Генерирую фото для маркетплейсов нейросетями: модель в вашей одежде, интерьер, фон. От 300₽ за фото, примеры в профиле @neuro_foto_lab"),
("@ai_zakazy_neiro", "chatter", [], "ru", "Midjourney стала хуже рисовать руки в новой версии или мне кажется?"),
("@ai_zakazy_neiro", "ad", [], "ru", "Курс по нейросетям для бизнеса: научим автоматизировать рутину с ChatGPT за 14 дней. Бесплатный урок по ссылке"),
("@ai_zakazy_neiro", "job", ["ai", "data"], "ru", "Нужно разметить 2000 картинок для обучения модели (bounding box, 5 классов) в CVAT. Оплата 2р за картинку"),

("@analitika_frilans", "job", ["data"], "ru", "Ищу аналитика: сделать дашборд в Yandex DataLens по продажам из Google-таблицы (выручка, средний чек, LTV). 12-15 тыс"),
("@analitika_frilans", "job", ["data"], "ru", "Нужен человек, кто хорошо знает Excel: макрос, который собирает отчёты из 20 файлов филиалов в одну книгу. 4000 р"),
("@analitika_frilans", "resume", [], "ru", "Аналитик данных: SQL, Python (pandas), Power BI. Дашборды, автоматизация отчётности, A/B тесты. Частичная занятость, @data_natalia"),
("@analitika_frilans", "chatter", [], "ru", "Power BI или DataLens для малого бизнеса, если бюджет почти нулевой?"),
("@analitika_frilans", "job", ["data", "marketing"], "ru", "Нужно настроить сквозную аналитику: Яндекс Метрика + Директ + CRM, и сделать отчёт по стоимости заявки. Бюджет 25к"),
]

B5 = [
("@frilans_daidzhest", "job", ["web", "design", "texts"], "ru", "Заказы за вторник 📋\n\n1) Правки на сайте на Битриксе, 3 часа работы — 4500₽ → @bitrix_fix\n2) Баннеры для ВК, 5 шт — 2500₽ → @ad_banners\n3) Статья про ипотеку, 5к знаков — 1500₽ → @ipoteka_blog\n\nОткликайтесь напрямую заказчикам"),
("@frilans_daidzhest", "chatter", [], "ru", "Итоги недели в мире фриланса: Хабр Фриланс поднял комиссию, Kwork запустил безопасную сделку для всех, а FL.ru обновил рейтинг исполнителей. Подробнее в наших разборах"),
("@frilans_daidzhest", "job", ["video", "audio"], "ru", "Подборка вечера:\n— монтаж влога для канала о путешествиях, 5000₽\n— чистка звука в 8 лекциях, 800₽ за лекцию\n— субтитры к ролику, 1000₽\nКонтакты у заказчиков в лс канала"),
("@frilans_daidzhest", "ad", [], "ru", "Закрытый канал с заказами без конкуренции: 300+ проектов в неделю до публикации на биржах. Доступ 490₽/мес 👉 @vip_zakazy_bot"),
("@frilans_daidzhest", "job", ["bots"], "ru", "Репост из @tg_razrabotka_ru:\nНужен бот-опросник для HR: кандидат отвечает на 10 вопросов, ответы летят в гугл-таблицу. Бюджет 6000₽"),

("@weekly_remote_roundup", "job", ["marketing", "texts", "design"], "en", "This week's picks 🗂\n• SEO writer for a fintech blog — $0.12/word\n• Facebook Ads manager for an e-com store — $1.5k/mo\n• Logo refresh for a bakery — $400\nApply via the links in each listing."),
("@weekly_remote_roundup", "chatter", [], "en", "Remote work news: a big freelance platform announced lower fees for new clients, and two countries added digital nomad visas. Full story on our blog."),
("@weekly_remote_roundup", "ad", [], "en", "Premium members see new gigs 24 hours earlier. Upgrade for $9/month and never miss a job again."),
("@weekly_remote_roundup", "job", ["mobile"], "en", "Forwarded from @startup_help_wanted\nAndroid dev needed to add offline mode to a field-inspection app (Room + WorkManager). $2,500 fixed."),

("@vakansii_formal", "job", ["assistant"], "ru", "ВАКАНСИЯ: Менеджер по работе с клиентами (удалённо)\n\nОбязанности:\n• обработка входящих заявок из CRM\n• консультирование по телефону и в мессенджерах\n• ведение базы клиентов\n\nТребования: грамотная речь, опыт в продажах от 1 года\n\nУсловия: оклад 40 000 ₽ + бонусы, график 5/2\n\nРезюме: hr@eco-okna.example"),
("@vakansii_formal", "job", ["web"], "ru", "Компания «ТехноСтрой» ищет frontend-разработчика (Vue 3) на проектную занятость.\nЗадачи: разработка личного кабинета подрядчика, интеграция с REST API.\nОплата: 1800 ₽/час, объём ~80 часов.\nКонтакт: @tehnostroy_it"),
("@vakansii_formal", "job", ["marketing"], "ru", "Требуется специалист по контекстной рекламе (Яндекс Директ).\nЗадачи: аудит текущих кампаний, запуск РСЯ, еженедельные отчёты.\nОплата: 30 000 ₽/мес, испытательный срок 1 месяц.\nОтклики с кейсами: @marketing_lead_ok"),
("@vakansii_formal", "ad", [], "ru", "Кадровое агентство «Профи» подберёт сотрудника за 7 дней. Гарантия замены 3 месяца. Оставьте заявку на сайте"),
("@vakansii_formal", "resume", [], "ru", "РЕЗЮМЕ\nБухгалтер-аналитик, 8 лет опыта\nНавыки: 1С, Excel (ВПР, сводные), отчётность\nИщу удалённую работу на полный день\nОжидания: от 60 000 ₽\nСвязь: @buh_elena"),

("@english_freelance_digest", "job", ["texts"], "en", "Job: Technical writer to document our public API (REST, ~40 endpoints). Markdown in a GitHub repo. Rate: $55/hr, est. 30 hrs. Apply: jobs@apiforge.dev"),
("@english_freelance_digest", "job", ["ai"], "en", "Job: Fine-tune a small open-source LLM on our support transcripts (~20k conversations) and deploy behind an API. Budget $4,000. Must show previous fine-tuning work."),
("@english_freelance_digest", "resume", [], "en", "Open to work: Product designer with a fintech background. Figma, user research, design systems. Based in Berlin, remote OK. Case studies: ola.design"),
("@english_freelance_digest", "ad", [], "en", "Sponsored: Notion templates for freelancers — client CRM, invoice tracker, project board. 50% off this week only."),
("@english_freelance_digest", "chatter", [], "en", "Poll: how many hours a week do you spend looking for new clients? 🗳"),

("@kazan_frilans_chat", "job", ["design"], "ru", "Ребят, нужна вывеска для шаурмичной, макет для печати 3х1 метр. Заплачу 3к. Можно сегодня?"),
("@kazan_frilans_chat", "job", ["mobile"], "ru", "ищу кто поправит приложение на андроиде, вылетает при оплате, код на котлине. оплата по договорённости, пишите в лс"),
("@kazan_frilans_chat", "chatter", [], "ru", "Всем привет! Я новенькая, дизайнер интерьеров, рада быть в чате 🙂"),
("@kazan_frilans_chat", "resume", [], "ru", "Фотограф и видеограф в Казани, снимаю мероприятия и контент для соцсетей. Монтирую сам. Пишите, скину примеры"),
("@kazan_frilans_chat", "job", ["video"], "ru", "Нужен видеограф на корпоратив в субботу, 4 часа съёмки + короткий ролик на 2 минуты. 15 000"),
("@kazan_frilans_chat", "chatter", [], "ru", "А кто-нибудь знает, самозанятому можно работать с ИП из Казахстана?"),
("@kazan_frilans_chat", "ad", [], "ru", "Коворкинг в центре Казани — первый день бесплатно, кофе и печенье включены. Адрес в закрепе"),

("@mixed_it_gigs", "job", ["web"], "ru", "Need Laravel dev / нужен разработчик на Laravel: доработать API для мобилки, 3 эндпоинта + тесты. $25/h, примерно 20 часов. @api_team_lead"),
("@mixed_it_gigs", "job", ["bots", "data"], "en", "Scraper for real-estate listings (3 sites), daily CSV export to S3, with basic dedup. $500. Python/Playwright."),
("@mixed_it_gigs", "resume", [], "ru", "DevOps на фрилансе: настрою CI/CD, Docker, Kubernetes, мониторинг. Разово или на поддержку. @devops_andrey"),
("@mixed_it_gigs", "chatter", [], "en", "Rust or Go for a backend side project? I keep going back and forth"),
("@mixed_it_gigs", "job", ["mobile"], "ru", "Нужно опубликовать готовое приложение в App Store — у нас нет опыта, есть сборка и аккаунт разработчика. Заплатим 5к за помощь"),
]

HAND = B1 + B2 + B3 + B4 + B5
