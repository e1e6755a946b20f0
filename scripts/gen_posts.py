#!/usr/bin/env python3
"""Composes labeled posts of many channel styles: data/train.jsonl and data/unseen.jsonl.

    python3 scripts/gen_posts.py            # writes both files (deterministic, seed 30)
    python3 scripts/gen_posts.py --check    # regenerates in memory and compares

Each channel has a style of its own: language (ru, en or both), the formats its posts come
in (one-liners, casual chat, structured vacancies, job-board feeds, hashtag posts, bullet
lists, stories, formal letters, digests, cross-posts), what it mostly carries (vacancies,
résumés, adverts, chatter), the categories it leans to, emoji, hashtags, casing, the way
contacts are written and a footer. A post is composed from the phrase banks of
scripts/gen_posts_banks.py. Labels follow /work/shared/datasets/SCHEMA.md (data/dev.jsonl):
a vacancy, order or gig is a job; someone offering themselves is a résumé; courses, channel
promotion, scams dressed as vacancies and agencies advertising are adverts; questions,
rules, news, unpaid "opportunities" are chatter. A digest that lists paid orders is a job
with the categories of its orders; a news digest is chatter, a digest sold behind a paywall
an advert.

The unseen channels (data/unseen.jsonl) appear in no training file, and every bank entry at
a position divisible by 5 is used only there, so those posts carry wordings and tasks the
training files never show.
"""

import argparse
import json
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import gen_posts_banks as B  # noqa: E402
import gen_posts_hand as H  # noqa: E402

CATS = list(B.TASKS)
SEED = 30


def split(bank, unseen):
    """The part of a bank a split may use: entries at i % 5 == 0 are for unseen channels."""
    if unseen:
        return bank
    kept = [x for i, x in enumerate(bank) if i % 5 != 0]
    return kept or bank


class Composer:
    def __init__(self, rng, unseen):
        self.r = rng
        self.unseen = unseen

    def pick(self, bank):
        return self.r.choice(split(bank, self.unseen))

    def handle(self):
        a = self.r.choice(["anna", "max", "dev", "studio", "shop", "hr", "pro", "team", "lab", "art",
                           "kate", "ivan", "olga", "mike", "zoe", "nik", "sam", "vera", "ray", "mila"])
        b = self.r.choice(["works", "design", "hire", "jobs", "biz", "ops", "media", "tech", "cafe",
                           "store", "group", "mgr", "pm", "owner", "brand", "code", "edit", "film"])
        return f"@{a}_{b}{self.r.choice(['', '', str(self.r.randint(1, 99))])}"

    def url(self):
        return self.r.choice([
            f"t.me/{self.handle()[1:]}", f"https://forms.gle/{self.r.randint(10**5, 10**6)}",
            f"https://{self.r.choice(['jobs', 'go', 'apply', 'join'])}.example.com/{self.r.randint(100, 999)}",
            f"bit.ly/{self.r.choice(['x', 'q', 'r'])}{self.r.randint(1000, 9999)}",
        ])

    def email(self):
        return f"{self.r.choice(['hr', 'jobs', 'hello', 'work', 'team'])}@{self.r.choice(['studio', 'acme', 'brightco', 'nordlab', 'mail'])}.{self.r.choice(['com', 'io', 'ru'])}"

    def fill(self, s, lang):
        ru = lang == "ru"
        return s.format(
            biz=self.r.choice(B.BIZ_RU if ru else B.BIZ_EN),
            n=self.r.randint(2, 9),
            product=self.r.choice(B.PRODUCTS_RU if ru else B.PRODUCTS_EN),
            lang_pair=self.r.choice(B.LANG_PAIRS_RU if ru else B.LANG_PAIRS_EN),
            k=self.r.randint(2, 9), k2=self.r.randint(10, 15),
            h=self.handle(), h2=self.handle(), url=self.url(), email=self.email(),
            brand=self.r.choice(B.BRANDS),
            name=self.r.choice(B.NAMES_RU if ru else B.NAMES_EN),
            skill="{skill}", role="{role}", task="{task}",
        )

    def task(self, cat, lang):
        ru_bank, en_bank = B.TASKS[cat]
        return self.fill(self.pick(ru_bank if lang == "ru" else en_bank), lang)

    def secondary(self, cat, lang):
        ru_bank, en_bank = B.SECONDARY[cat]
        return self.r.choice(ru_bank if lang == "ru" else en_bank)

    def parts(self, lang):
        ru = lang == "ru"
        return {
            "budget": self.fill(self.pick(B.BUDGET_RU if ru else B.BUDGET_EN), lang),
            "deadline": self.pick(B.DEADLINE_RU if ru else B.DEADLINE_EN),
            "contact": self.fill(self.pick(B.CONTACT_RU if ru else B.CONTACT_EN), lang),
            "opener": self.pick(B.OPENER_JOB_RU if ru else B.OPENER_JOB_EN),
            "extra": self.pick(B.EXTRA_RU if ru else B.EXTRA_EN),
        }


CAT_TAG_RU = {"web": "#сайты", "bots": "#боты", "mobile": "#мобильная_разработка", "design": "#дизайн",
              "video": "#видеомонтаж", "texts": "#копирайтинг", "marketing": "#маркетинг", "ai": "#нейросети",
              "assistant": "#ассистент", "translation": "#переводы", "audio": "#озвучка", "data": "#таблицы"}
CAT_TAG_EN = {"web": "#webdev", "bots": "#automation", "mobile": "#mobileapps", "design": "#design",
              "video": "#videoediting", "texts": "#writing", "marketing": "#marketing", "ai": "#ai",
              "assistant": "#va", "translation": "#translation", "audio": "#voiceover", "data": "#data"}


def cap(s):
    return s[:1].upper() + s[1:]


def job_text(c, fmt, lang, cats, style):
    """The text of one job post in format `fmt`."""
    r = c.r
    ru = lang == "ru"
    main = c.task(cats[0], lang)
    if len(cats) > 1:
        main = f"{main}, {c.secondary(cats[1], lang)}"
    p = c.parts(lang)
    emo = style["emoji"]
    e = (lambda x: x + " ") if emo else (lambda x: "")
    extras = " ".join(c.pick(B.EXTRA_RU if ru else B.EXTRA_EN) for _ in range(r.randint(0, 2)))
    tags = " ".join((CAT_TAG_RU if ru else CAT_TAG_EN)[k] for k in cats)
    if fmt == "oneliner":
        text = f"{p['opener']} {main}. {cap(p['budget'])}, {p['deadline']}. {cap(p['contact'])}"
    elif fmt == "casual":
        q = "кто сделает" if ru else "anyone can"
        body = r.choice([f"{q} {main}? {p['budget']} {p['contact']}",
                         f"{main} — {p['budget']}, {p['deadline']}, {p['contact']}",
                         f"{'срочно' if ru else 'urgent'} {main} {p['budget']} {p['contact']}"])
        text = body.lower() if style["lower"] else body
    elif fmt == "structured":
        if ru:
            text = (f"{e('💼')}Вакансия: {cap(main)}\n\nЗадачи:\n— {cap(main)}\n— {p['extra']}\n\n"
                    f"Условия:\n— {cap(p['budget'])}\n— {cap(p['deadline'])}\n\nКонтакт: {p['contact']}")
        else:
            text = (f"{e('💼')}Position: {cap(main)}\n\nScope:\n- {cap(main)}\n- {p['extra']}\n\n"
                    f"Terms:\n- {cap(p['budget'])}\n- {cap(p['deadline'])}\n\nHow to apply: {p['contact']}")
    elif fmt == "feed":
        src = style["feed_name"] if ru else style["feed_name_en"]
        if ru:
            text = (f"{e('🆕')}Новый проект на {src}\n<b>{cap(main)}</b>\n{e('💰')}{cap(p['budget'])}\n"
                    f"{e('⏰')}Опубликовано {r.randint(2, 50)} мин назад\n{c.url()}")
        else:
            text = (f"{e('🟢')}New job on {src}\n<b>{cap(main)}</b>\n{e('💵')}{cap(p['budget'])}\n"
                    f"{e('⏱')}Posted {r.randint(2, 50)} minutes ago\n{c.url()}")
    elif fmt == "hashtags":
        head = "#заказ" if ru else "#gig"
        text = f"{head} {tags}\n{cap(main)}.\n{cap(p['budget'])}. {cap(p['deadline'])}.\n{p['contact']}"
    elif fmt == "bullets":
        text = (f"{e('📌')}{cap(main)}\n\n• {p['extra']}\n• {cap(p['deadline'])}\n\n"
                f"{e('💸')}{cap(p['budget'])}\n{e('📩')}{p['contact']}")
    elif fmt == "story":
        if ru:
            text = (f"Всем привет! {r.choice(['Мы небольшая команда', 'Я владелица небольшого бизнеса', 'У нас семейное дело'])}, "
                    f"давно откладывали, но пора. {p['opener']} {main}. {extras} "
                    f"По деньгам: {p['budget']}. {cap(p['contact'])}")
        else:
            text = (f"Hey everyone! {r.choice(['We are a small team', 'I run a tiny business', 'Family business here'])} "
                    f"and we finally need help. {p['opener']} {main}. {extras} "
                    f"Money-wise: {p['budget']}. {cap(p['contact'])}")
    elif fmt == "formal":
        if ru:
            text = (f"Добрый день, уважаемые специалисты.\nКомпания ищет подрядчика: {main}.\n"
                    f"{extras}\nВознаграждение: {p['budget']}. Сроки: {p['deadline']}.\n"
                    f"Просим направлять предложения: {p['contact']}\nС уважением, отдел закупок")
        else:
            text = (f"Dear freelancers,\nWe are seeking a contractor to {main}.\n{extras}\n"
                    f"Compensation: {p['budget']}. Timeline: {p['deadline']}.\n"
                    f"Please submit proposals: {p['contact']}\nKind regards, Procurement")
    else:
        raise ValueError(fmt)
    return text.replace("  ", " ").strip()


def task_phrase(c, lang, cat):
    """An order's task as a bare phrase (no opener), for hard negatives."""
    t = c.task(cat, lang)
    return t[:1].lower() + t[1:]


def resume_text(c, lang, cat, style):
    ru = lang == "ru"
    if c.r.random() < 0.4:
        t = c.fill(c.pick(B.RESUME_TASK_RU if ru else B.RESUME_TASK_EN), lang)
        t = t.replace("{task}", task_phrase(c, lang, cat))
    else:
        t = c.fill(c.pick(B.RESUME_RU if ru else B.RESUME_EN), lang)
    t = t.replace("{role}", (B.RESUME_ROLE_RU if ru else B.RESUME_ROLE_EN)[cat])
    t = t.replace("{skill}", (B.SKILL_RU if ru else B.SKILL_EN)[cat])
    if style["lower"] and c.r.random() < 0.5:
        t = t.lower()
    return t


def ad_text(c, lang, style):
    ru = lang == "ru"
    if c.r.random() < 0.3:
        t = c.fill(c.pick(B.AD_TASK_RU if ru else B.AD_TASK_EN), lang)
        t = t.replace("{task}", task_phrase(c, lang, c.r.choice(style["focus"] or CATS)))
    else:
        t = c.fill(c.pick(B.AD_RU if ru else B.AD_EN), lang)
    t = t.replace("{skill}", c.r.choice(list((B.SKILL_RU if ru else B.SKILL_EN).values())).split(",")[0])
    return c.r.choice(B.AD_PREFIX_RU if ru else B.AD_PREFIX_EN) + t


def chatter_text(c, lang, style):
    ru = lang == "ru"
    if c.r.random() < 0.3:
        t = c.fill(c.pick(B.CHATTER_TASK_RU if ru else B.CHATTER_TASK_EN), lang)
        t = t.replace("{task}", task_phrase(c, lang, c.r.choice(style["focus"] or CATS)))
    else:
        t = c.fill(c.pick(B.CHATTER_RU if ru else B.CHATTER_EN), lang)
    t = t.replace("{skill}", c.r.choice(list((B.SKILL_RU if ru else B.SKILL_EN).values())).split(",")[0])
    pre = c.r.choice(B.CHATTER_PREFIX_RU if ru else B.CHATTER_PREFIX_EN)
    suf = c.r.choice(B.CHATTER_SUFFIX_RU if ru else B.CHATTER_SUFFIX_EN)
    t = pre + (t[:1].lower() + t[1:] if pre else t) + suf
    if style["lower"]:
        t = t.lower()
    return t


def digest_text(c, lang, style):
    """A digest listing 2–3 paid orders: (text, categories)."""
    ru = lang == "ru"
    n = c.r.randint(2, 3)
    cats = c.r.sample(style["focus"] or CATS, k=min(n, len(style["focus"] or CATS)))
    lines = [c.pick(B.DIGEST_HEAD_RU if ru else B.DIGEST_HEAD_EN), ""]
    for i, cat in enumerate(cats, 1):
        p = c.parts(lang)
        lines.append(f"{i}. {cap(c.task(cat, lang))} — {p['budget']}, {p['contact']}")
    return "\n".join(lines), cats


FOOTERS_RU = ["\n\n— — —\nРазместить вакансию: {h}", "\n\n👉 Подписаться: {h}", "\n\n#фриланс #удаленка",
              "\n\nНашли ошибку? Пишите админу {h}"]
FOOTERS_EN = ["\n\n———\nPost a gig: {h}", "\n\n👉 Subscribe: {h}", "\n\n#freelance #remote",
              "\n\nSpotted a scam? Tell the admin {h}"]

FORMATS = ["oneliner", "casual", "structured", "feed", "hashtags", "bullets", "story", "formal"]

TRAIN_CHANNELS = [
    "@zakazy_dlya_dizainerov", "@fl_ru_feed", "@webdev_gigs_ru", "@remote_work_world", "@smm_jobs_board",
    "@kopirayter_birzha", "@video_editors_hire", "@ai_freelance_club", "@botdev_orders", "@flutter_jobs_ru",
    "@va_hiring_hub", "@perevodchiki_chat", "@voiceover_castings", "@excel_zadachi", "@tilda_zakazy",
    "@upwork_top_gigs", "@freelancer_com_feed", "@remote_ok_digest", "@design_crowd_jobs", "@nocode_orders",
    "@ecom_helpers", "@marketplace_pro_chat", "@wb_ozon_freelance", "@python_zakazy", "@js_remote_jobs",
    "@crypto_gigs_daily", "@gamedev_freelance", "@podcast_production_jobs", "@chat_frilanserov", "@udalenka_chat",
    "@freelance_moms", "@studentam_podrabotka", "@it_vakansii_spb", "@moscow_digital_jobs", "@kyiv_remote_it",
    "@almaty_freelance", "@minsk_it_zakazy", "@latam_remote_devs", "@eu_contract_jobs", "@indie_makers_gigs",
    "@motion_design_ru", "@illustrators_wanted", "@ux_ui_vakansii", "@seo_specialists_chat", "@target_vk_jobs",
    "@email_marketing_gigs", "@datalens_analytics_ru", "@powerbi_jobs", "@support_agents_remote", "@moderators_needed",
    "@lokalizatsiya_igr", "@sound_design_hub", "@shorts_reels_editors", "@prompt_engineers_ru", "@chatgpt_orders",
    "@wordpress_fixers", "@bitrix_razrabotka", "@shopify_experts_hire", "@no_code_make_zapier", "@web3_builders_board",
    "@kwork_top_feed", "@habr_freelance_feed", "@weblancer_feed", "@workzilla_zadaniya",
]
UNSEEN_CHANNELS = [
    "@rabota_online_24", "@freelance_orders_kz", "@digital_nomad_jobs", "@creators_hire_board", "@biz_pomoshniki",
    "@gigs_for_students", "@zakazchik_ishet", "@remote_latam_hub", "@tg_bots_marketplace", "@content_makers_ru",
    "@pro_dizain_chat", "@startup_freelance_en", "@frilans_sibir", "@agency_outsource_board", "@yandex_services_feed",
    "@mobile_devs_wanted", "@video_rilsy_zakazy", "Удалёнка для всех | чат", "Remote Gigs Worldwide", "@profi_ru_orders",
]


def channel_styles(names, rng, unseen):
    """Deterministic, distinct styles: each channel differs in language, formats, mix, focus."""
    styles = []
    used = set()
    for i, name in enumerate(names):
        for _ in range(100):
            lang = rng.choice(["ru", "ru", "en", "en", "mix"])
            fmts = tuple(sorted(rng.sample(FORMATS, k=rng.choice([1, 2, 2, 3]))))
            mix_kind = rng.choice(["jobs", "jobs", "jobs", "mixed", "chat", "resumes", "ads"])
            focus = tuple(sorted(rng.sample(CATS, k=rng.choice([1, 2, 3])))) if rng.random() < 0.45 else ()
            key = (lang, fmts, mix_kind, focus)
            if key not in used:
                used.add(key)
                break
        weights = {
            "jobs": (0.72, 0.1, 0.1, 0.08),
            "mixed": (0.5, 0.18, 0.16, 0.16),
            "chat": (0.3, 0.1, 0.15, 0.45),
            "resumes": (0.35, 0.45, 0.1, 0.1),
            "ads": (0.4, 0.1, 0.4, 0.1),
        }[mix_kind]
        styles.append({
            "name": name,
            "lang": lang,
            "formats": list(fmts),
            "kinds": weights,
            "focus": list(focus),
            "emoji": rng.random() < 0.5,
            "lower": rng.random() < 0.3,
            "footer": rng.random() < 0.35,
            "digests": rng.random() < 0.3,
            "feed_name": rng.choice(["FL.ru", "Kwork", "Weblancer", "Хабр Фриланс", "Workzilla"]),
            "feed_name_en": rng.choice(["Upwork", "Freelancer.com", "Contra", "PeoplePerHour", "Guru"]),
            "n": rng.randint(34, 46) if unseen else rng.randint(13, 22),
        })
    return styles


def compose(names, unseen, rng, prefix):
    c = Composer(rng, unseen)
    styles = channel_styles(names, rng, unseen)
    rows = []
    n_dup = 0
    for st in styles:
        footer = None
        if st["footer"]:
            lang0 = "en" if st["lang"] == "en" else "ru"
            footer = c.fill(rng.choice(FOOTERS_RU if lang0 == "ru" else FOOTERS_EN), lang0)
        for _ in range(st["n"]):
            lang = st["lang"] if st["lang"] != "mix" else rng.choice(["ru", "en"])
            kind = rng.choices(["job", "resume", "ad", "chatter"], weights=st["kinds"])[0]
            cats = []
            if kind == "job":
                if st["digests"] and rng.random() < 0.2:
                    text, cats = digest_text(c, lang, st)
                else:
                    if rng.random() < 0.18:
                        pair = rng.choice([p for p in B.PAIRS if not st["focus"] or p[0] in st["focus"]] or B.PAIRS)
                        cats = list(pair)
                    else:
                        cats = [rng.choice(st["focus"] or CATS)]
                    text = job_text(c, rng.choice(st["formats"]), lang, cats, st)
            elif kind == "resume":
                text = resume_text(c, lang, rng.choice(st["focus"] or CATS), st)
            elif kind == "ad":
                if st["digests"] and rng.random() < 0.2:
                    text = c.fill(c.pick(B.PROMO_DIGEST_RU if lang == "ru" else B.PROMO_DIGEST_EN), lang)
                else:
                    text = ad_text(c, lang, st)
            else:
                if st["digests"] and rng.random() < 0.25:
                    text = c.fill(c.pick(B.NEWS_DIGEST_RU if lang == "ru" else B.NEWS_DIGEST_EN), lang)
                else:
                    text = chatter_text(c, lang, st)
            if footer and rng.random() < 0.8:
                text += footer
            rows.append({
                "channel": st["name"], "text": text, "is_job": kind == "job", "kind": kind,
                "categories": cats, "lang": lang, "dup_group": None,
            })
    # Cross-posts: some jobs re-posted, lightly edited, in another channel of the same split.
    jobs = [i for i, r in enumerate(rows) if r["kind"] == "job"]
    for i in rng.sample(jobs, k=len(jobs) // 12):
        src = rows[i]
        other = rng.choice([s for s in styles if s["name"] != src["channel"]])
        n_dup += 1
        group = f"{prefix}g{n_dup}"
        src["dup_group"] = group
        ru = src["lang"] == "ru"
        head = rng.choice((["Репост:", f"Переслано из {src['channel']}", "Актуально!", "🔁 Дублирую"] if ru
                           else ["Repost:", f"Forwarded from {src['channel']}", "Still open!", "🔁 Reposting"]))
        rows.append(dict(src, channel=other["name"], text=f"{head}\n{src['text']}", dup_group=group))
    rng.shuffle(rows)
    for n, row in enumerate(rows, 1):
        row["id"] = f"{prefix}{n:04d}"
    order = ["id", "channel", "text", "is_job", "kind", "categories", "lang", "dup_group"]
    return [{k: r[k] for k in order} for r in rows]


def hand_rows():
    """The posts of scripts/gen_posts_hand.py, written one by one, in their order."""
    order = ["id", "channel", "text", "is_job", "kind", "categories", "lang", "dup_group"]
    rows = []
    for n, (channel, kind, cats, lang, text) in enumerate(H.HAND, 1):
        row = {"id": f"h{n:03d}", "channel": channel, "text": text, "is_job": kind == "job",
               "kind": kind, "categories": list(cats), "lang": lang, "dup_group": None}
        rows.append({k: row[k] for k in order})
    return rows


def generate():
    train = compose(TRAIN_CHANNELS, False, random.Random(SEED), "t") + hand_rows()
    unseen = compose(UNSEEN_CHANNELS, True, random.Random(SEED + 1), "u")
    assert not {r["channel"] for r in train} & {r["channel"] for r in unseen}
    return train, unseen


def dump(rows):
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--check", action="store_true", help="compare with the files instead of writing")
    ap.add_argument("--out", default=str(Path(__file__).resolve().parent.parent / "data"))
    args = ap.parse_args()
    train, unseen = generate()
    out = Path(args.out)
    files = {"train.jsonl": dump(train), "unseen.jsonl": dump(unseen)}
    if args.check:
        bad = [f for f, d in files.items() if (out / f).read_text(encoding="utf-8") != d]
        if bad:
            sys.exit(f"differs from the generator: {', '.join(bad)}")
        print("data/train.jsonl and data/unseen.jsonl match the generator")
        return
    for f, d in files.items():
        (out / f).write_text(d, encoding="utf-8")
    for name, rows in (("train", train), ("unseen", unseen)):
        kinds = {}
        for r in rows:
            kinds[r["kind"]] = kinds.get(r["kind"], 0) + 1
        print(f"{name}: {len(rows)} posts, {len({r['channel'] for r in rows})} channels, {kinds}")


if __name__ == "__main__":
    main()
