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

B6 = [
("@redaktsiya_udalenno", "job", ["texts"], "ru", "В медиа про путешествия нужен автор: репортажи и гайды по городам, 2-3 материала в месяц, гонорар 7000 за текст. Пришлите 2 ссылки на опубликованное"),
("@redaktsiya_udalenno", "job", ["texts"], "ru", "Ищем литературного редактора на рассылку (еженедельно, ~4 тыс знаков): вычитать, подсократить, придумать заголовок. 1500₽ за выпуск"),
("@redaktsiya_udalenno", "job", ["texts", "marketing"], "ru", "Нужен автор email-рассылок для онлайн-школы английского: серия из 7 писем на прогрев к запуску + темы писем. 14 000₽"),
("@redaktsiya_udalenno", "job", ["texts"], "ru", "Требуется сценарист для YouTube-канала о финансах: 4 сценария в месяц по 10-12 минут хронометража, с фактчекингом. Ставка 5000₽ за сценарий"),
("@redaktsiya_udalenno", "resume", [], "ru", "Журналист и редактор, 10 лет в деловых СМИ. Пишу кейсы, интервью, колонки для руководителей. Возьму пару проектов в месяц. @editor_pavel"),
("@redaktsiya_udalenno", "chatter", [], "ru", "Поделитесь, как вы ищете эксперта для интервью, когда материал срочный, а никто не отвечает?"),
("@redaktsiya_udalenno", "job", ["texts"], "ru", "Нужно написать тексты для сайта клиники (главная, 6 услуг, о нас) — около 20 тыс знаков. Медицинское образование будет плюсом. 18к"),
("@redaktsiya_udalenno", "ad", [], "ru", "Редакторская школа: 8 недель, разбор ваших текстов, трудоустройство лучших. Старт потока 1 числа, запись в боте @red_school_bot"),

("@copy_and_content_en", "job", ["texts"], "en", "Need product descriptions for 60 items in our outdoor gear shop, 80-120 words each, SEO keywords provided. $8 per description."),
("@copy_and_content_en", "job", ["texts"], "en", "Looking for a proofreader to go through a 70k-word fantasy novel before it goes to beta readers. Budget $700."),
("@copy_and_content_en", "job", ["texts", "marketing"], "en", "B2B SaaS needs 4 long-form SEO articles a month (2,000+ words) on HR software topics. $250 per article, briefs provided."),
("@copy_and_content_en", "job", ["texts", "video"], "en", "Script writer for an explainer video (90 seconds) about our accounting app, plus a shot list for the animator. $300."),
("@copy_and_content_en", "resume", [], "en", "Content writer | health & wellness | 300+ articles published | fast turnaround. Samples on request → @writes_by_nina"),
("@copy_and_content_en", "chatter", [], "en", "Do clients actually read the AI detection reports or is it just a checkbox?"),
("@copy_and_content_en", "job", ["texts"], "en", "Grant writer needed for a small nonprofit — one application, due in 3 weeks. Paying $1,200."),

("@web_zakazy_spb", "job", ["web"], "ru", "Нужно поднять скорость загрузки сайта на WordPress: сейчас PageSpeed 35 на мобиле, хотим хотя бы 80. Оплата за результат, 12к"),
("@web_zakazy_spb", "job", ["web"], "ru", "Доработка интернет-магазина на OpenCart: фильтр по характеристикам и выгрузка товаров из YML. Бюджет 20 000 ₽. Пишите @stroymag_spb"),
("@web_zakazy_spb", "job", ["web"], "ru", "Перенести сайт на новый хостинг, настроить SSL и почту на домене. Работы на пару часов, 3000₽"),
("@web_zakazy_spb", "job", ["web", "design"], "ru", "Нужен редизайн главной страницы сайта турагентства и вёрстка на Битриксе. Макет делаете вы. 45-50к"),
("@web_zakazy_spb", "job", ["web"], "ru", "Ищем бэкенд-разработчика на Django: личный кабинет для учеников онлайн-школы, оплата через Продамус. Почасовка 1500-2000₽"),
("@web_zakazy_spb", "resume", [], "ru", "Фронтендер (React, TypeScript), 3 года коммерческого опыта. Ищу проектную работу или part-time. GitHub в профиле @front_timur"),
("@web_zakazy_spb", "chatter", [], "ru", "Кто-нибудь ещё верстает письма для рассылок? Outlook опять всё поломал, как вы с ним живёте"),
("@web_zakazy_spb", "job", ["web"], "ru", "Сайт на Тильде: подключить оплату через Тинькофф и сделать корзину с промокодами. Оплачу 4000"),
("@web_zakazy_spb", "ad", [], "ru", "Создадим сайт для вашего бизнеса за 3 дня! Шаблоны от 9900₽, домен в подарок. Студия «Сайт Быстро», звоните"),

("@automation_bots_en", "job", ["bots"], "en", "Need a Python script to auto-download invoices from 4 supplier portals every Monday and rename them by date. ~$150."),
("@automation_bots_en", "job", ["bots"], "en", "Telegram bot for our gym: class schedule, booking, and a waitlist with auto-notify when a spot opens. $600."),
("@automation_bots_en", "job", ["bots", "data"], "en", "Scrape Google Maps for all dental clinics in 5 cities (name, phone, website, rating) and deliver as CSV. $120."),
("@automation_bots_en", "job", ["bots"], "en", "Zapier expert wanted: connect Typeform → HubSpot → Slack with some branching logic. Should be quick for the right person, $80."),
("@automation_bots_en", "resume", [], "en", "I automate boring stuff: Python, Selenium, APIs, Google Apps Script. 200+ scripts delivered. Tell me what eats your time → @autom8_ben"),
("@automation_bots_en", "chatter", [], "en", "Is Telegram rate limiting bots harder lately? My broadcast to 3k users takes forever now"),
("@automation_bots_en", "job", ["bots", "ai"], "en", "Build an n8n workflow that reads incoming support emails, classifies them with GPT, and creates tickets in Jira. Budget $400."),
("@automation_bots_en", "ad", [], "en", "No-code bot builder — launch your Telegram shop in 10 minutes, no programming. Free plan available!"),

("@smm_i_target", "job", ["marketing"], "ru", "Ищем таргетолога для салона красоты в Екатеринбурге, запуск рекламы в ВК, бюджет на рекламу 20к, оплата работы 12к в месяц"),
("@smm_i_target", "job", ["marketing"], "ru", "Нужен SMM-специалист на ведение телеграм-канала юриста: контент-план, 4 поста в неделю, посевы. 25 000₽/мес"),
("@smm_i_target", "job", ["marketing", "design"], "ru", "Нужно оформить и запустить сообщество ВК для пиццерии: обложка, аватар, меню-виджет и первые 10 постов. 15к"),
("@smm_i_target", "resume", [], "ru", "Таргетолог, ВК и Яндекс. Лиды для онлайн-школ от 150₽. Кейсы с цифрами, честные отчёты. Пишите @target_ksenia"),
("@smm_i_target", "chatter", [], "ru", "Что сейчас с охватами в ВК клипах? У нас просели в 3 раза после нового года"),
("@smm_i_target", "job", ["marketing"], "ru", "Нужен специалист по посевам в телеграме: закупить рекламу в 15 каналах по нашей нише (недвижимость), подобрать каналы без ботов. Оплата 10к + бюджет"),
("@smm_i_target", "ad", [], "ru", "Продвижение в Telegram: 1000 живых подписчиков за 990₽! Гарантия, без отписок. Заказать у @nakrutka_fast"),
("@smm_i_target", "job", ["marketing", "texts"], "ru", "Ищем SEO-специалиста: собрать семантику для сайта мебельной фабрики и написать ТЗ копирайтеру на 30 страниц. 30 тыс"),
]

B7 = [
("@design_jobs_worldwide", "job", ["design"], "en", "Packaging design for a craft beer line — 3 labels + a 6-pack carrier. Dieline provided. $900, 3 weeks."),
("@design_jobs_worldwide", "job", ["design"], "en", "Need a UI designer to redo the onboarding screens of our fitness app (7 screens) following our existing design system. $35/hr."),
("@design_jobs_worldwide", "job", ["design", "marketing"], "en", "Looking for someone to design Facebook/Instagram ad creatives (12 static + 4 carousel) and suggest copy angles. $500."),
("@design_jobs_worldwide", "resume", [], "en", "Brand identity designer — logos, guidelines, packaging. 8 yrs. Recently did a coffee roaster and a pet food brand. Portfolio: studio-fern.example"),
("@design_jobs_worldwide", "chatter", [], "en", "Figma just changed their pricing again. Anyone moving to Penpot?"),
("@design_jobs_worldwide", "job", ["design"], "en", "Etsy seller needs 5 printable planner pages designed, minimalist style. $60 total."),

("@mobile_zakazy_ru", "job", ["mobile"], "ru", "Нужен iOS-разработчик: добавить в приложение вход через Apple ID и исправить баг с клавиатурой на iPhone SE. Оплата 25к"),
("@mobile_zakazy_ru", "job", ["mobile"], "ru", "Ищем Flutter-разработчика на поддержку приложения фитнес-клуба: мелкие доработки, обновления под новые версии ОС. 40 часов в месяц по 1500"),
("@mobile_zakazy_ru", "job", ["mobile", "design"], "ru", "Надо сделать дизайн и разработку простого приложения-каталога для нашего магазина (Android и iOS). Бюджет до 200 тыс., сроки 2 месяца"),
("@mobile_zakazy_ru", "resume", [], "ru", "Android-разработчик, Kotlin, Jetpack Compose, 5 лет. Доведу ваше приложение до релиза в Google Play и RuStore. @kotlin_artem"),
("@mobile_zakazy_ru", "chatter", [], "ru", "RuStore реально даёт трафик или это для галочки? Кто публиковался?"),

("@podrabotka_studenty", "job", ["assistant"], "ru", "Нужен человек на приём заявок в WhatsApp для службы доставки цветов, вечерние смены с 18 до 22. 700₽ за смену"),
("@podrabotka_studenty", "job", ["data"], "ru", "Подработка: внести данные из бумажных анкет (отсканированы) в Google-таблицу, около 500 анкет. 10₽ за анкету"),
("@podrabotka_studenty", "job", ["texts"], "ru", "Ищу студента филфака для проверки курсовых на орфографию и оформление по ГОСТу, 5 работ, по 800р"),
("@podrabotka_studenty", "ad", [], "ru", "Заработок для студентов от 1000₽ в день без вложений!!! Только переписка с клиентами. Подробности у менеджера @dohod_bez_vlozheniy"),
("@podrabotka_studenty", "chatter", [], "ru", "Кто-то уже получал выплаты с этого канала? Хочу понять, не развод ли"),
("@podrabotka_studenty", "resume", [], "ru", "Студентка 3 курса, ищу подработку на удалёнке: могу делать презентации, набирать тексты, вести соцсети. Свободна по вечерам @stud_yana"),
("@podrabotka_studenty", "ad", [], "ru", "Помогу с дипломом и курсовыми — антиплагиат от 80%, сроки от 2 дней. Пишите, цены приятные"),

("@freelance_questions", "chatter", [], "en", "How do you price a logo if the client only wants 'something simple'? $50? $500?"),
("@freelance_questions", "chatter", [], "en", "Client asking me to sign an NDA AND a non-compete for a $200 gig. Red flag?"),
("@freelance_questions", "chatter", [], "en", "What's a fair rate to translate 1,000 words EN→FR these days? Asking for a quote I got"),
("@freelance_questions", "chatter", [], "en", "Anyone tried building a Telegram bot with no code? Wondering if it's worth learning Python instead"),
("@freelance_questions", "chatter", [], "en", "Just finished my first paid video editing gig 🎉 $80 for a 5-minute vlog. Small but it's a start"),

("@voprosy_frilanseram", "chatter", [], "ru", "Сколько стоит сделать телеграм-бота для записи? Хочу понимать порядок цен, прежде чем искать исполнителя"),
("@voprosy_frilanseram", "chatter", [], "ru", "Нормально ли брать 100% предоплату за логотип у нового клиента?"),
("@voprosy_frilanseram", "chatter", [], "ru", "Как вы оформляете самозанятость, если клиент из другой страны платит на карту?"),
("@voprosy_frilanseram", "chatter", [], "ru", "Сдала заказ на монтаж, а клиент говорит что «не то настроение». Переделывать бесплатно?"),
("@voprosy_frilanseram", "ad", [], "ru", "Бесплатный чек-лист «10 ошибок фрилансера при переговорах» — забирайте в нашем боте @frilans_checklist_bot"),

("@audio_podcast_jobs", "job", ["audio"], "en", "Podcast editor needed: weekly interview show, ~50 min, remove ums, level audio, add intro/outro. $60/episode."),
("@audio_podcast_jobs", "job", ["audio"], "en", "Looking for a British male voice for a 3-minute e-learning module. Script ready, need it by Thursday. $150."),
("@audio_podcast_jobs", "job", ["audio", "video"], "en", "Sound designer for an indie animated short (6 min): foley, ambience, final mix. Budget $1,000."),
("@audio_podcast_jobs", "resume", [], "en", "Mixing & mastering engineer — hip-hop, pop, indie. 48h turnaround. Before/after samples in my pinned post"),
("@audio_podcast_jobs", "chatter", [], "en", "Is the Shure SM7B still worth it for podcasting or are the cheaper dynamics just as good now?"),

("@va_i_assistenty", "job", ["assistant"], "ru", "Ищу личного ассистента для эксперта-психолога: запись клиентов, напоминания, переписка, ведение таблицы оплат. 4 часа в день, 25к/мес"),
("@va_i_assistenty", "job", ["assistant"], "ru", "Требуется менеджер по продажам на входящие заявки (онлайн-курсы), созвоны с клиентами, % от продаж + фикс 15к"),
("@va_i_assistenty", "job", ["assistant", "texts"], "ru", "Нужна помощница в блог: отвечать на комментарии, готовить черновики постов по моим голосовым, искать гостей для эфиров. 20 тыс"),
("@va_i_assistenty", "resume", [], "ru", "Онлайн-помощник руководителя: документы, CRM, созвоны, поиск подрядчиков. Работаю по МСК, с 9 до 18. @pomoshnik_anna"),
("@va_i_assistenty", "chatter", [], "ru", "Как правильно брать оплату за ассистирование — почасово или фикс в месяц? Клиент предлагает фикс, но задач всё больше"),
("@va_i_assistenty", "job", ["assistant"], "ru", "Модератор для отзывов на маркетплейсе: отвечать на отзывы покупателей по шаблонам, ~50 в день. 10 000 ₽ в месяц"),
]

# B8 and B9: 22 more channels in genres the lists above do not cover (a university careers
# board, marketplace sellers, accountants and 1C, interior visualisation, edtech, channel
# admins, typo-ridden one-liners, a city's business owners, an IT recruiter, music
# producers, a feed of forwarded orders; web3 bounties, game-dev team finding, a one-line
# link aggregator, QA testers, an agency's formal RFQs, Amazon sellers, a US city's business
# owners, newsletter writers, agencies subcontracting, emoji walls, LLM agents).
# Rules applied here that data/README.md does not spell out:
# - A request to hire someone for a concrete task is a job even without a budget ("who has
#   built this? write with a price"); a request for recommendations with no task ("can anyone
#   recommend a web guy, nothing urgent") is chatter.
# - Rev-share or "money later" team-finding is chatter (like the equity-only offers above);
#   paid work in the same chat is a job. An unpaid volunteer call is chatter.
# - Token airdrops, quests and points farming are ads; a bounty paying a fixed reward for a
#   concrete piece of work is a job. A "support" account asking for a seed phrase is an ad
#   (a scam), as is any pay-to-work offer ("one-time verification fee").
# - In a channel admins' chat, buying or selling ad placements, selling a channel and mutual
#   promotion are ads; paying a person for work (admin, posts, ad purchasing) is a job.
# - An event or product promotion (a careers fair, a music distributor, a course, a prompt
#   pack, a sponsorship slot) is an ad; a career consultant selling sessions is an ad like
#   "Помогу с дипломом" above.
# - A forwarded post is labeled by what was forwarded ("Переслано от …" / "Forwarded from …").
# - Testing a product goes under the product's trade (a mobile app -> mobile, a web
#   storefront -> web, a bot -> bots); integrations of 1C or a marketplace with other systems
#   via API -> bots (integrations), reports in Excel/Sheets -> data. Tutoring itself and
#   bookkeeping have no slug, so the edtech and 1C channels carry their work that has one.
B8 = [
("@studkarera_politeh", "job", ["translation"], "ru", "Редакции журнала «Вестник Политеха» нужны переводчики аннотаций научных статей на английский: 40 аннотаций по 150–200 слов, 300 ₽ за аннотацию. Приоритет — студентам ИнЯза и магистрантам. Срок — до 20 апреля. Писать на vestnik@politeh.example"),
("@studkarera_politeh", "chatter", [], "ru", "Ищем волонтёров на Форум молодых инженеров 14–16 мая! Регистрация участников, навигация, помощь спикерам. Взамен — сертификат, мерч и баллы в портфолио достижений. Анкета в закрепе 🙌"),
("@studkarera_politeh", "job", ["web"], "ru", "Студенческое конструкторское бюро робототехники ищет веб-разработчика: сделать сайт СКБ (новости, проекты, заявки на вступление, галерея), Django или WordPress — на ваш выбор. Оплата из гранта 35 000 ₽, можно засчитать как производственную практику. Контакт: @skb_robotics_head"),
("@studkarera_politeh", "ad", [], "ru", "Ярмарка вакансий «Карьерный старт» — 23 марта, главный корпус, холл 2 этажа. 40+ компаний, экспресс-собеседования, разбор резюме от HR. Вход по студенческому, регистрация обязательна: politeh-career.example/fair"),
("@studkarera_politeh", "job", ["marketing"], "ru", "Оплачиваемая стажировка в отделе digital-маркетинга сети аптек «Здоровье+»: 3 месяца, 20 часов в неделю, помощь с контекстной рекламой и отчётами по кампаниям. Стипендия 30 000 ₽/мес. Для студентов 3–4 курса и магистрантов. Резюме на career@zdorovie-plus.example, тема «Стажёр маркетинг»"),
("@studkarera_politeh", "chatter", [], "ru", "Напоминаем: справки о статусе студента для работодателей выдаются в деканатах по вторникам и четвергам с 10:00 до 16:00. Электронную версию можно заказать в личном кабинете."),
("@studkarera_politeh", "job", ["texts"], "ru", "Приёмной комиссии нужен автор: 10 текстов о направлениях подготовки для сайта и буклета — живым языком, для школьников 11 класса, без канцелярита. 2 000 ₽ за текст, все материалы дадим. Студенты журфака — вам особенно рады. @priem_politeh_smm"),

("@selleram_mp_chat", "job", ["design"], "ru", "ищу инфографа. 12 слайдов на детские ночники, стиль мягкий, пастель, фото есть. до пятницы. по 600р за слайд, главный слайд дороже, обсудим. пишите в лс"),
("@selleram_mp_chat", "job", ["design", "texts"], "ru", "Нужен rich-контент для Озона на 5 SKU (термокружки): продающий текст блоками + дизайн самих блоков. Кто делает под ключ — напишите цену за один SKU и пару примеров. @termo_shop_ozon"),
("@selleram_mp_chat", "ad", [], "ru", "Выкупы под отзывы 🔥 Ваши товары выкупят реальные люди: 5 звёзд + фото + текст. Пакет 50 выкупов — 9 900 ₽. Без блокировок кабинета, работаем 3 года! @vykup_top_service"),
("@selleram_mp_chat", "chatter", [], "ru", "Кто уже получал штраф за неверные габариты на ВБ? С нас списали 38 тысяч за одну поставку, поддержка отвечает шаблоном. Оспорить вообще реально?"),
("@selleram_mp_chat", "job", ["bots"], "ru", "Нужно синхронизировать остатки между Ozon и нашим МойСклад через API, раз в 10 минут. Сейчас правим руками и ловим отмены из-за овербуков. Готовы заплатить 18к + поддержка по договорённости"),
("@selleram_mp_chat", "resume", [], "ru", "Снимаю предметку для WB и Ozon: на белом и в интерьере, ретушь включена. Своя студия в Люберцах, можно прислать товар курьером. От 350 ₽ за кадр. Примеры: t.me/predmetka_lubertsy"),
("@selleram_mp_chat", "job", ["design", "marketing"], "ru", "Ищу спеца, который и карточку оформит, и внутреннюю рекламу на ВБ настроит: новый товар (коврики для йоги), запуск с нуля. Оплата 20к за запуск + % с продаж первого месяца"),
("@selleram_mp_chat", "resume", [], "ru", "Ищу заказы! Пишу SEO-описания и названия для карточек WB/Ozon под ключи из MPStats, 200 ₽ за карточку, от 10 штук скидка. Примеры скину, пишите @seo_kartochki_vera"),

("@1c_buhuchet_chat", "job", ["bots"], "ru", "Требуется программист 1С: настроить автоматическую загрузку заказов с Ozon в 1С:УНФ (через API или готовый модуль), чтобы не вбивать руками. Бюджет 20–25 тыс. @unf_ip_petrova"),
("@1c_buhuchet_chat", "chatter", [], "ru", "С первого числа новые формы уведомлений по ЕНП — кто уже отправлял, программа сама подтянула или заполняли вручную?"),
("@1c_buhuchet_chat", "resume", [], "ru", "Программист 1С, 10 лет. Доработка типовых конфигураций, обмены, отчёты на СКД, перенос данных со старых баз. Удалённо, от 2 000 ₽/час. @prog1c_igor"),
("@1c_buhuchet_chat", "job", ["data"], "ru", "Нужно сделать в Google Таблицах управленческий отчёт (ДДС и P&L по месяцам) для кофейни: данные из выгрузки 1С и банка, чтобы я потом сама раз в месяц вставляла выгрузку и всё пересчитывалось. 8 000 ₽"),
("@1c_buhuchet_chat", "ad", [], "ru", "Курс «Бухгалтер на УСН за 2 месяца» — практика в 1С на реальных кейсах, помощь с трудоустройством. Рассрочка 0%. Запись: buh-start.example"),
("@1c_buhuchet_chat", "chatter", [], "ru", "Девочки, кто в какой программе работает с маркировкой? Честный знак опять обновился, у нас УПД не уходят"),
("@1c_buhuchet_chat", "job", ["texts"], "ru", "Ищу автора для телеграм-канала нашей бухгалтерской фирмы: 2 поста в неделю простым языком про налоги для ИП и самозанятых. Темы даю, фактуру проверяю сама. 1 000 ₽ за пост"),
("@1c_buhuchet_chat", "resume", [], "ru", "Нужны клиенты на ведение! Бухгалтер, ИП и ООО на УСН и ОСНО, первичка, зарплата, отчётность, 1С:Бухгалтерия 3.0. От 5 000 ₽/мес, первая консультация бесплатно. @buh_marina_usn"),

("@vizualizatsiya_interierov", "job", ["design"], "ru", "Нужна визуализация кухни-гостиной, 28 м², 4 ракурса. Проект в ArchiCAD есть, материалы подобраны. Срок 5 дней, бюджет 14 000 ₽. Пишите с портфолио @interier_lyubov"),
("@vizualizatsiya_interierov", "job", ["video", "design"], "ru", "Нужна анимация облёта загородного дома (экстерьер, 40–60 сек) для презентации покупателям + 3 статичных рендера фасада. Модель в SketchUp, надо довести до фотореализма. Бюджет 60–70к"),
("@vizualizatsiya_interierov", "resume", [], "ru", "Визуализатор, 3ds Max + Corona, интерьеры и предметка. Правки в пределах ТЗ бесплатно, ракурс от 1 500 ₽. Портфолио: behance.net/render_kirill"),
("@vizualizatsiya_interierov", "chatter", [], "ru", "Corona 12 или перейти на D5 Render? На D5 всё летает, но свет какой-то игрушечный. Кто пробовал сдавать клиентам?"),
("@vizualizatsiya_interierov", "ad", [], "ru", "Продаю библиотеку моделей: 3 500 объектов мебели и декора с настроенными материалами Corona. 1 990 ₽ вместо 6 000 ₽ до воскресенья. Ссылка в профиле"),
("@vizualizatsiya_interierov", "job", ["design"], "ru", "Фабрика корпусной мебели ищет 3D-моделлера: смоделировать 25 позиций (шкафы, комоды, тумбы) по чертежам для сайта и маркетплейсов, рендер на белом фоне. 1 200 ₽ за модель с рендером"),

("@edtech_rabota", "job", ["texts"], "ru", "Онлайн-школа программирования для детей ищет методиста: написать 12 уроков по Scratch (конспект, задания, проверочные вопросы). 3 500 ₽ за урок. Опыт преподавания обязателен. Отклик: @kodiki_school_hr"),
("@edtech_rabota", "job", ["assistant"], "ru", "Куратор потока на курс по графическому дизайну: проверять домашки по чек-листу, отвечать в чате студентов, напоминать о дедлайнах. 2–3 часа в день, 18 000 ₽ за поток (6 недель)"),
("@edtech_rabota", "job", ["web"], "ru", "Нужен техспец GetCourse: перенести 3 курса со старого аккаунта, настроить тарифы, страницы оплаты и доступы по группам. Бюджет 25 тыс., начать на этой неделе"),
("@edtech_rabota", "resume", [], "ru", "Репетитор по английскому, C1, 6 лет опыта, готовлю к ЕГЭ и IELTS. Занятия онлайн, 1 500 ₽ за 60 минут, пробный урок бесплатно. @english_with_dasha"),
("@edtech_rabota", "ad", [], "ru", "Профессия «Методист онлайн-курсов» за 3 месяца 🎓 Трудоустройство или вернём деньги. Скидка 50% по промокоду EDU50 до пятницы"),
("@edtech_rabota", "chatter", [], "ru", "Нормально, что школы платят кураторам за поток, а не за часы? Мне поток растянули на две недели, а оплата та же"),
("@edtech_rabota", "job", ["design", "texts"], "ru", "Нужен человек собрать рабочую тетрадь к интенсиву по тайм-менеджменту: 24 страницы, структура есть — нужно дописать упражнения и свёрстать в Canva или Figma. 15 000 ₽"),
("@edtech_rabota", "chatter", [], "ru", "Ищем преподавателей-волонтёров в бесплатный кружок программирования для подростков из детских домов: 2 часа в неделю онлайн, материалы дадим. Откликнитесь, если есть желание помочь ❤️"),

("@adminy_tg_kanalov_chat", "job", ["assistant"], "ru", "Ищу админа в канал про авто (35к подписчиков): 4 поста в день по контент-плану, отложка, чистка комментов от спама. 12 000 ₽/мес, выплаты раз в две недели. Пишите @avtoblog_owner"),
("@adminy_tg_kanalov_chat", "ad", [], "ru", "Куплю рекламу в каналах по психологии и саморазвитию, CPM до 700 ₽. Присылайте статистику и прайс в лс"),
("@adminy_tg_kanalov_chat", "ad", [], "ru", "Продаётся канал, тематика юмор, 18 400 подписчиков, охват поста 4–5к, аудитория живая. Цена 90 000 ₽, торг уместен. Сделка через гаранта"),
("@adminy_tg_kanalov_chat", "job", ["texts"], "ru", "нужен автор в канал про дачу и огород: 5 постов в неделю по 800–1200 знаков, темы даю. 350 ₽ за пост, тест на 3 поста оплачиваю. присылайте примеры"),
("@adminy_tg_kanalov_chat", "job", ["marketing"], "ru", "Ищем закупщика рекламы на проект (онлайн-школа рисования): подбор каналов, переговоры с админами, анализ цены подписчика. Бюджет на закупы 300к/мес, ваша оплата 10% от бюджета"),
("@adminy_tg_kanalov_chat", "chatter", [], "ru", "У кого тоже статистика в TGStat после обновления расходится с реальной? Охваты занижены раза в два"),
("@adminy_tg_kanalov_chat", "job", ["bots"], "ru", "Нужен бот для заявок в закрытый канал: капча, автоодобрение, приветствие в личку и выгрузка списка вступивших в CSV. 4–5 тыс, сделать за пару дней"),
("@adminy_tg_kanalov_chat", "ad", [], "ru", "Взаимопиар! Канал о личных финансах, 22к, ищу партнёров от 10к в смежных тематиках. Формат 1/24, подборки не предлагать"),

("@zakazy_bez_zpt", "job", ["web"], "ru", "нужен лендос на тильде под мероприятие 20к срочно до чт @ivent_nsk"),
("@zakazy_bez_zpt", "job", ["bots"], "ru", "нада бот тг чтоб записывал на реснички и напоминал за день.. 5к норм? пиши в лс"),
("@zakazy_bez_zpt", "job", ["texts"], "ru", "сроч копирайтер 10 текстов на сайт по окнам пвх по 2к зн 300р шт кто свободен"),
("@zakazy_bez_zpt", "job", ["web"], "ru", "сайт на вордпресс лёг белый экран после обновы плагина памагите за деньги конечно 🙏 @ole_g_ya"),
("@zakazy_bez_zpt", "resume", [], "ru", "ищу подработку любую кроме звонков и продаж, могу таблицы тексты монтаж немного"),
("@zakazy_bez_zpt", "chatter", [], "ru", "набираю команду на проект бабки потом когда выстрелит нужен прогер и дизайнер"),
("@zakazy_bez_zpt", "job", ["video", "design"], "ru", "кто смонтирует рилс из 30 фоток салона + обложку к нему в одном стиле, 2500 за всё"),
("@zakazy_bez_zpt", "ad", [], "ru", "зарабатывай с телефона от 3к в день без опыта!! пиши + в коменты скину инфу"),

("@biznes_tver_chat", "job", ["design"], "ru", "Добрый день! Пекарня «Колосок» на Трёхсвятской. Нужно меню для витрины и стойки (А3 и А4), фото продукции есть. Бюджет 4–5 тыс. Кто возьмётся? Телефон в профиле"),
("@biznes_tver_chat", "job", ["web"], "ru", "Ветклиника, ищем кто сделает нормальный сайт с онлайн-записью к врачам и прайсом. Сейчас страничка на конструкторе, стыдно показывать. Готовы вложить 60–80к, работаем по договору"),
("@biznes_tver_chat", "chatter", [], "ru", "Посоветуйте толкового таргетолога, кто с кем работал? Пока просто присматриваюсь, задачу ещё не сформулировали"),
("@biznes_tver_chat", "job", ["bots", "web"], "ru", "Для автосервиса нужна онлайн-запись на сайт и бот в телеграме, чтобы клиент видел статус ремонта. Сайт на WordPress уже есть. Кто делал такое — напишите с ценой"),
("@biznes_tver_chat", "ad", [], "ru", "Открыли полиграфию на Вагжанова: визитки от 990 ₽ за 1000 шт, листовки, баннеры, таблички. Участникам чата скидка 10% по слову «чат»!"),
("@biznes_tver_chat", "chatter", [], "ru", "Кто-нибудь знает, куда жаловаться, если 2ГИС не убирает фейковые отзывы? Конкуренты завалили за неделю"),
("@biznes_tver_chat", "job", ["texts"], "ru", "Агентство недвижимости: нужны описания 30 квартир для Авито и ЦИАН, живые, без шаблонных «уютная квартира в тихом районе». 250 ₽ за описание, фото и планировки даём"),
("@biznes_tver_chat", "ad", [], "ru", "Набираем в команду дизайнеров! Сначала обучение по нашей методике (15 000 ₽, можно в рассрочку), после — гарантированные заказы от местного бизнеса. Пишите в лс за подробностями"),

("@it_rekruter_lena", "job", ["web"], "ru", "🔥 Вакансия: Backend-разработчик (Go), middle+\n\nКомпания: сервис онлайн-записи для салонов красоты, 40 человек, на рынке с 2019 года.\n\nЗадачи:\n— развитие API записи и биллинга (Go, PostgreSQL, Kafka)\n— интеграции с платёжками и онлайн-кассами\n— code review, участие в проектировании\n\nЧто ждём:\n— от 3 лет коммерческой разработки на Go\n— опыт с нагруженными сервисами\n— Docker/K8s на уровне пользователя\n\nМы предлагаем:\n— 280 000 – 350 000 ₽ на руки\n— полная удалёнка или офис в Москве\n— ДМС после испытательного, оплата обучения\n\nОткликнуться: @rekruter_lena_it, в первой строке «Go» и ссылка на резюме"),
("@it_rekruter_lena", "job", ["mobile"], "ru", "Ищу Flutter-разработчика в финтех-стартап, проект на 4–6 месяцев\n\nСтек: Flutter 3, Bloc, REST/GraphQL, Firebase\nЗадача: с нуля приложение учёта личных финансов под iOS и Android, дизайн готов в Figma\n\nВилка: 2 500–3 200 ₽/час или фикс за этап, ИП/самозанятость\nЗанятость: от 30 ч/неделю\n\nВажно: 2+ приложения в сторах (пришлите ссылки), опыт с in-app покупками\n\nПишите @rekruter_lena_it"),
("@it_rekruter_lena", "job", ["texts"], "ru", "#вакансия #техписатель\nТехнический писатель в команду облачной платформы\n\n— документация для разработчиков: API reference, гайды, туториалы\n— работа с инженерами и продактами, docs-as-code (Markdown, Git)\n— английский B2+, часть доков на английском\n\nЗП: 150–190к net, удалёнка, 5/2\nБонусы: 13-я зарплата, техника от компании\n\nПишите @rekruter_lena_it, приложите 2–3 примера текстов"),
("@it_rekruter_lena", "job", ["bots"], "ru", "Python-разработчик (автоматизация и интеграции), part-time\n\nЛогистической компании нужен человек на внутренние скрипты и боты:\n— парсинг личных кабинетов перевозчиков\n— телеграм-бот для водителей (статусы рейсов, фото документов)\n— интеграции с 1С и amoCRM по API\n\nФормат: 20 ч/неделю, 1 500–1 800 ₽/час, договор ГПХ\nСтарт: как можно скорее\n\nРезюме и GitHub → @rekruter_lena_it"),
("@it_rekruter_lena", "ad", [], "ru", "Провожу карьерные консультации для разработчиков: разбор резюме, мок-собеседование, как торговаться за оффер. 5 000 ₽ за сессию 90 минут. Запись в личке"),
("@it_rekruter_lena", "chatter", [], "ru", "Немного статистики за квартал: на вакансию middle-бэкендера в среднем 300+ откликов, а сеньоров мы по-прежнему ищем по 2 месяца. У вас так же?"),
("@it_rekruter_lena", "resume", [], "ru", "#резюме Публикую кандидата (с его согласия):\nFrontend-разработчик, 4 года, React/TypeScript, Next.js, опыт в e-commerce и финтехе.\nИщет: удалёнку, full-time, от 230 000 ₽ на руки.\nКонтакт для работодателей — через меня, @rekruter_lena_it"),

("@bity_svedenie_chat", "job", ["audio"], "ru", "Нужен бит в стиле грустного вайба под вокал, референс скину. Эксклюзив с полными правами. Бюджет 8–10к"),
("@bity_svedenie_chat", "job", ["design"], "ru", "Нужна обложка на сингл 3000×3000, стиль — плёнка, зерно, фото артиста есть. Плачу 2 500 ₽. Кидайте работы в лс"),
("@bity_svedenie_chat", "job", ["video"], "ru", "Нужно lyric-видео под трек (2:40): анимированный текст в ритм, фоном наш арт. 6 000 ₽, срок неделя"),
("@bity_svedenie_chat", "chatter", [], "ru", "Кто в коллаб? Пишу тексты и топлайны, ищу битмейкера, всё пополам со стримингов"),
("@bity_svedenie_chat", "resume", [], "ru", "Битмейкер, трэп / дрилл / фонк. Лизы от 1 500 ₽, эксклюзив от 7 000 ₽, делаю и под заказ. Битстор: beatstars.com/ldbeats"),
("@bity_svedenie_chat", "ad", [], "ru", "Дистрибуция музыки на все площадки за 0 ₽, 100% роялти ваши! Выпускайтесь с нами — ссылка в описании"),
("@bity_svedenie_chat", "job", ["texts", "audio"], "ru", "Ищу автора текста на поп-трек (куплет + припев, тема — расставание, без мата), и чтобы напел демо-референс под минус. 5–7к"),

("@peresylki_zakazov", "job", ["web"], "ru", "Переслано от Марина Ковалёва:\nДевочки, кто умеет в Тильду? Нужен сайт-визитка для мастера маникюра, 5 блоков + запись через форму. 7 000 ₽ 🙏"),
("@peresylki_zakazov", "job", ["texts"], "ru", "↪️ Переслано из канала «Город N | Новости»\nИщем внештатного автора новостей: 3–4 заметки в день по будням, 250 ₽ за заметку, график гибкий. Резюме — в бот @gorodn_redakciya_bot"),
("@peresylki_zakazov", "ad", [], "ru", "Переслано из канала «Деньги без вложений»:\n💸 Заработок на просмотре видео до 5000₽ в день! Пиши «ХОЧУ» — расскажу схему"),
("@peresylki_zakazov", "job", ["bots", "ai"], "ru", "Переслано от @sergey_logist:\nНужен бот, который из фото накладной вытаскивает номер, вес и адрес и пишет в таблицу. Можно через GPT. Бюджет 25к"),
("@peresylki_zakazov", "chatter", [], "ru", "Друзья, пересылайте сюда заказы из своих чатов с пометкой источника. Посты со ссылками на «оплату за обучение» удаляю без предупреждения."),
("@peresylki_zakazov", "resume", [], "ru", "Переслано от Илья:\nЯ фронтенд-разработчик, ищу проект на месяц-два, React/Next.js. Если у кого есть что-то — пишите"),
("@peresylki_zakazov", "job", ["translation"], "ru", "Переслано от Бюро «Глобус»:\nСрочно: перевод договора поставки с турецкого на русский, 12 страниц, завтра к 18:00. Ставка двойная за срочность"),
("@peresylki_zakazov", "job", ["design"], "ru", "Переслано из канала «Арт-школа Линия»:\nИщем дизайнера оформить 6 обложек для уроков в едином стиле, 1 500 ₽ за штуку, исходники в Figma. Пишите @liniya_art_admin\n\nP.S. Стартует набор на курс «Графический дизайн с нуля» — подписчикам скидка 30% до воскресенья!"),
]

B9 = [
("@onchain_bounties", "job", ["texts"], "en", "🟢 BOUNTY — Write a 'Getting started' guide for our TypeScript SDK: install, connect a wallet, first swap. 1,500–2,500 words, every code snippet must run. Reward: 600 USDC. Claim it in #bounties on our Discord, first approved claimer gets it."),
("@onchain_bounties", "ad", [], "en", "🪂 AIRDROP SEASON 2 IS LIVE 🪂 Connect your wallet, complete quests, farm points → convert to $PLX at TGE. Don't miss out!"),
("@onchain_bounties", "job", ["web"], "en", "Frontend bounty: fix the staking dashboard — APY shows NaN when a pool is empty, and disconnecting the wallet doesn't clear state. React + wagmi. 350 USDC, PR within 5 days."),
("@onchain_bounties", "ad", [], "en", "Support team here 👋 if your wallet is stuck or tokens are missing, DM us your seed phrase and our engineer will restore access for free."),
("@onchain_bounties", "job", ["design", "video"], "en", "Need a designer for our launch kit: 6 social banners + a 15s animated teaser for X. 1,200 USDC, half upfront. DM @lumen_core_mktg"),
("@onchain_bounties", "chatter", [], "en", "gas on mainnet is insane today, anyone bridging to an L2 before claiming?"),
("@onchain_bounties", "job", ["bots"], "en", "Bounty: a Telegram bot that posts every new proposal from our Snapshot space to the community chat, with a vote link and a reminder 24h before close. 400 USDC."),
("@onchain_bounties", "chatter", [], "en", "Bounty #12 (SDK guide) is closed — thanks to everyone who claimed, payouts went out this morning. New batch drops Monday."),

("@gamedev_lfg_chat", "chatter", [], "en", "[LFG] [RevShare] Hobby team looking for a programmer for a cozy farming sim. No pay until release, 20% rev share. We have a GDD and 3 artists!"),
("@gamedev_lfg_chat", "resume", [], "en", "[FOR HIRE] 3D character artist — stylized, hand-painted textures, game-ready topology. From $250 per character. ArtStation: artstation.com/mkova"),
("@gamedev_lfg_chat", "job", ["video"], "en", "[PAID] Need a trailer for our Steam page (60–90s). Gameplay footage is captured, need the cut, text cards and music sync. $400."),
("@gamedev_lfg_chat", "job", ["translation"], "en", "[PAID] Localize our visual novel into Brazilian Portuguese and Spanish: ~42k words in Ren'Py scripts. Send a quote per language."),
("@gamedev_lfg_chat", "job", ["mobile"], "en", "[PAID] Unity dev to port our PC puzzle game to Android: touch controls, UI scaling, Google Play billing for the full unlock. $2k fixed."),

("@remote_links_daily", "job", ["texts"], "en", "Content Writer (B2B fintech) · Remote, EU · €3.5k/mo → jobs.lever.co/finlane/8c2f"),
("@remote_links_daily", "job", ["web"], "en", "Senior Frontend Engineer (Vue/Nuxt) · Remote (UTC±3) · $85–110k → boards.greenhouse.io/parcelhub/4471"),
("@remote_links_daily", "job", ["bots"], "en", "Integrations Engineer — Zapier, webhooks, REST connectors for our CRM · contract $60/hr → wellfound.com/jobs/2231-integrations"),
("@remote_links_daily", "job", ["texts", "design", "data"], "en", "Today's 3:\n1. Copy editor, part-time, $30/hr → bit.ly/3copyed\n2. Brand designer, contract, $4k → bit.ly/brand4k\n3. Data entry clerk, $15/hr → bit.ly/dataclerk15"),
("@remote_links_daily", "ad", [], "en", "⭐ See these listings 6 hours earlier, with salary filters: remotelinks.pro — first week free"),
("@remote_links_daily", "chatter", [], "en", "Heads up: several listings from last week were closed within 24h. If a link 404s, the role is filled — we don't remove old posts."),

("@qa_testers_network", "job", ["mobile"], "en", "Paid test cycle: our fitness tracker app on Android 11–14, 6 hours of exploratory testing, bugs into Jira with repro steps + screen recording. $20/hr, 10 testers."),
("@qa_testers_network", "job", ["web"], "en", "Need an SDET to write Playwright end-to-end tests for our checkout (Next.js storefront) and wire them into GitHub Actions. ~40 hrs at $45/hr."),
("@qa_testers_network", "chatter", [], "en", "ISTQB Foundation — worth it for landing the first QA job, or just a cash grab?"),
("@qa_testers_network", "resume", [], "en", "Manual + API tester (Postman, Charles Proxy), 4 years in fintech and e-com. Available for short test cycles, UTC+2. @qa_ivanna"),
("@qa_testers_network", "job", ["bots"], "en", "Looking for someone to load-test our Telegram bot before a giveaway (we expect 20k users in an hour): a script that simulates the traffic and a report on where it breaks. $300."),
("@qa_testers_network", "ad", [], "en", "Get paid to test websites! 💸 Sign up, pay a one-time $29 verification fee and start earning $50/day."),
("@qa_testers_network", "resume", [], "en", "Looking for a project: QA automation engineer (Cypress, Playwright, k6), can set up a test suite from scratch and hook it into CI. Part-time, $40/hr. Portfolio: github.com/tomas-qa"),

("@lingua_rfq_desk", "job", ["translation"], "en", "RFQ #4471\nLanguage pair: EN > PL\nDomain: medical devices (IFU)\nVolume: 14,300 words (38% fuzzy matches)\nTool: Trados Studio package\nDeadline: 12 June, 10:00 CET\nPlease reply with your per-word rate and availability to pm@linguadesk.example"),
("@lingua_rfq_desk", "job", ["translation", "texts"], "en", "RFQ #4475 — Arabic > English: transcription and translation of 6 recorded interviews (≈5.5 h in total), verbatim, timestamps every 2 minutes. Quote per audio minute."),
("@lingua_rfq_desk", "job", ["audio"], "en", "RFQ #4479 — Canadian French voice-over for an e-learning course, 22 min. The script is already translated. Studio-quality WAV required. Send a demo and your rate per finished minute."),
("@lingua_rfq_desk", "chatter", [], "en", "Notice to vendors: the May payment run moves to 8 June because of the bank holiday. Invoices received after 3 June go into the July run."),
("@lingua_rfq_desk", "resume", [], "en", "Vendor application: Korean > English translator, game and app localization, 7 years, memoQ and Phrase. $0.09/word, minimum fee $40. CV on request."),

("@amazon_fba_sellers_circle", "job", ["design", "texts"], "en", "Need A+ content for 3 ASINs (bamboo cutting boards): 5 modules each, copy + graphics, plus a brand story module. $450 for all three. DM @grainandgrove"),
("@amazon_fba_sellers_circle", "job", ["marketing"], "en", "Looking for a PPC manager for a $12k/mo Amazon ad account in pet supplies. ACoS is at 48%, we want it under 30. Retainer + performance bonus."),
("@amazon_fba_sellers_circle", "chatter", [], "en", "Anyone else get hit by the new low-inventory fee this month? Mine went from $0 to $640 overnight"),
("@amazon_fba_sellers_circle", "ad", [], "en", "🚀 Stop guessing keywords. Our tool shows competitors' sales estimates + reverse ASIN lookup. 14-day free trial, code FBA14"),
("@amazon_fba_sellers_circle", "job", ["texts"], "en", "Listing rewrite: title, 5 bullets and backend search terms for 8 listings (kitchen gadgets). Keyword lists from Helium 10 provided. $40 per listing."),

("@austin_smallbiz_owners", "job", ["web"], "en", "Our chiropractic office needs a new website with online booking tied to Jane App. 5–6 pages, should load fast on phones. Budget around $3,500. Local preferred so we can meet."),
("@austin_smallbiz_owners", "job", ["design"], "en", "Food truck owner here 🌮 need a menu board (2 panels, 4x3 ft) and a matching Instagram menu graphic. $300–400, before the East Side festival on the 14th."),
("@austin_smallbiz_owners", "chatter", [], "en", "Can anyone recommend a good web guy? Nothing urgent, just want a name for when we redo things next year."),
("@austin_smallbiz_owners", "job", ["texts"], "en", "Looking for someone to write the copy for our plumbing company's site — 9 service pages + an about page, local SEO friendly. $900. Text me at 512-555-0148."),
("@austin_smallbiz_owners", "ad", [], "en", "Local SEO packages for Austin businesses: Google Business Profile optimization, citations, review management. From $299/mo. Free audit → rankatx.example"),
("@austin_smallbiz_owners", "job", ["bots", "web"], "en", "We run a dog grooming salon. Want a chat widget on our website that answers FAQs and books appointments, plus text reminders. Anyone built something like this? Paying of course, budget $1–2k."),
("@austin_smallbiz_owners", "resume", [], "en", "Hi neighbors 👋 I'm a local web designer (Squarespace and WordPress), I've done sites for two coffee shops on South Congress. Happy to grab a coffee and look at yours. @atx_webby"),

("@newsletter_operators", "job", ["texts"], "en", "Ghostwriter wanted for a weekly newsletter on commercial real estate (1,200–1,500 words). I record a voice memo with the ideas each week. $350/issue, 3-month trial."),
("@newsletter_operators", "job", ["design", "web"], "en", "Need someone to design a custom Beehiiv theme and build a subscribe landing page (logo is done). $700."),
("@newsletter_operators", "ad", [], "en", "Sponsorship slot open in our 48k-subscriber AI newsletter — $1,100 per placement, 52% open rate. Book: adslots.example/ai-brief"),
("@newsletter_operators", "chatter", [], "en", "Gmail's promotions tab is killing us — open rate down from 51% to 38% in a month. Anyone found something that helps?"),
("@newsletter_operators", "resume", [], "en", "Newsletter editor for hire: I edit, fact-check and schedule. Currently on 3 weekly letters (finance, climate, parenting), room for one more. @edits_by_ray"),
("@newsletter_operators", "job", ["data", "marketing"], "en", "Looking for someone to audit our 90k subscriber list: segment by engagement, build a cohort dashboard, then set up a re-engagement sequence in Kit. $1,500."),
("@newsletter_operators", "chatter", [], "en", "We're looking for guest writers for our newsletter — unpaid for now, but it's great exposure to 20k readers! Pitch us your idea."),

("@agency_overflow_work", "job", ["web"], "en", "White-label WordPress build for a law firm client: 12 pages from approved Figma, ACF blocks, no page builders. $2,400, 3 weeks. NDA required."),
("@agency_overflow_work", "job", ["texts"], "en", "We need a writer for 10 service-area pages for an HVAC client (Dallas suburbs). Not spun content — each page needs real local details. $90/page."),
("@agency_overflow_work", "job", ["web", "texts"], "en", "Overflow: small Shopify store needs About, FAQ and shipping policy pages written AND built into the theme. ~$500, quick turnaround."),
("@agency_overflow_work", "job", ["design", "web"], "en", "Looking for a contractor who can do both: redesign a SaaS client's Webflow site (6 templates) and implement it. $6k–8k, we handle all client comms."),
("@agency_overflow_work", "ad", [], "en", "Dev shop in Kraków available for white-label overflow: Laravel, React, Shopify. Transparent $32/hr. Portfolio → devkrk.example"),
("@agency_overflow_work", "resume", [], "en", "Freelance WordPress dev, 60+ white-label builds for agencies — fast, quiet, never contacts your clients. Booking for next month. @wp_ghost_dev"),
("@agency_overflow_work", "job", ["texts", "marketing"], "en", "Need SEO content + on-page for a dental group: keyword map for 20 pages, rewritten meta titles/descriptions, 4 blog posts a month. $1,800/month retainer."),

("@gig_alerts_fire", "job", ["web"], "en", "🚨🚨 NEW GIG 🚨🚨\n💻 WordPress: fix the broken contact form + speed up the homepage\n💰 $150\n⏰ 48h\n📩 @sunbeam_decor\n🔥🔥🔥"),
("@gig_alerts_fire", "job", ["bots"], "en", "⚡⚡⚡ BOT GIG ⚡⚡⚡\n🤖 Telegram bot for a pizza place: menu ➡️ cart ➡️ order sent to the kitchen chat\n💵 $350\n📅 1 week\n👉 DM @pizza_nonna_ops"),
("@gig_alerts_fire", "ad", [], "en", "💰💰💰 MAKE $500/DAY 💰💰💰\n✅ No experience\n✅ Just your phone\n✅ Paid daily\n👇 Comment 'INFO' 👇"),
("@gig_alerts_fire", "job", ["texts"], "en", "✍️✍️ WRITER NEEDED ✍️✍️\n📝 5 blog posts about home composting (~1,000 words)\n💲 $60 each\n🗓️ ongoing if it works out\n📧 hello@greenbin.example"),
("@gig_alerts_fire", "resume", [], "en", "🎬✨ Video editor available ✨🎬\n✂️ Reels / TikTok / YouTube\n⚡ 24h delivery\n💸 from $20\n📲 @cutz_by_mo"),
("@gig_alerts_fire", "job", ["design", "marketing"], "en", "🎨📣 DESIGN + ADS 📣🎨\nCandle shop needs 8 Facebook ad creatives AND someone to launch the campaign\n💰 $400 + ad spend\n📩 @wickandwax"),
("@gig_alerts_fire", "chatter", [], "en", "🙏🙏 Reminder 🙏🙏\n❌ Never pay to apply\n❌ Never share your bank login\n✅ Report scams to @gig_alerts_admin"),

("@llm_agents_for_hire", "job", ["ai", "bots"], "en", "Looking for someone to build an AI agent that reads our shared inbox, drafts replies from our help-center docs and pushes them to Front for a human to approve. OpenAI or Claude, your call. $2,500."),
("@llm_agents_for_hire", "job", ["ai", "web"], "en", "Add a RAG-powered search box to our docs site (Docusaurus): embed ~600 pages, answers with citations, streaming UI. $1,800 fixed."),
("@llm_agents_for_hire", "job", ["ai", "texts"], "en", "Need a prompt engineer to build a prompt chain that turns our podcast transcripts into 3 LinkedIn posts and a newsletter blurb in our voice. Deliver prompts + a Google Sheet workflow. $500."),
("@llm_agents_for_hire", "resume", [], "en", "Looking for a project: I build LLM agents in production — LangGraph, tool calling, evals. Shipped a support agent handling 4k tickets/mo. Open to one new contract. @agentsmith_dev"),
("@llm_agents_for_hire", "ad", [], "en", "🔥 10,000 ChatGPT prompts for business — only $9! Lifetime updates. Buy now → promptvault.example"),
("@llm_agents_for_hire", "chatter", [], "en", "Is anyone actually seeing ROI from agents, or is it all demos? Our pilot hit 60% deflection in testing and 20% live."),
("@llm_agents_for_hire", "job", ["ai", "data"], "en", "Need someone to label 3,000 customer chats by intent (12 classes), then fine-tune a small classifier and report precision/recall per class. $1,200."),
]

HAND = B1 + B2 + B3 + B4 + B5 + B6 + B7 + B8 + B9
