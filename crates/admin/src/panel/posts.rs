//! Posts: the search (`GET /posts`), a post's trace from its text to every delivery
//! (`GET /posts/{id}`), and what a moderator does to one: label it, send it back to the
//! classifier, send its failed deliveries again.

use std::sync::Arc;

use askama::Template;
use askama_web::WebTemplate;
use axum::body::Bytes;
use axum::extract::{Path, Query, State};
use axum::response::IntoResponse;
use chrono::{DateTime, Duration, NaiveDate, Utc};
use jobwire_store::{ClassificationRecord, DeliveryRow, PostFilter, PostId, PostListRow, PostRow};
use serde::Deserialize;

use super::{Chrome, Ctx, PageResult, Panel, PanelError, done, form_field, snippet, when};
use crate::ops::Label;

#[derive(Debug, Deserialize, Default)]
pub struct PostsQuery {
    source: Option<String>,
    category: Option<String>,
    status: Option<String>,
    from: Option<String>,
    to: Option<String>,
    q: Option<String>,
    before: Option<i64>,
}

/// Post statuses, as the filter offers them.
const STATUSES: [&str; 7] = [
    "filtered",
    "queued",
    "waiting",
    "not_job",
    "job",
    "fanned_out",
    "duplicate",
];

struct PostLine {
    row: PostListRow,
    snippet: String,
    when: String,
}

#[derive(Template, WebTemplate)]
#[template(path = "posts.html")]
struct PostsPage {
    b: Chrome,
    sources: Vec<(i64, String)>,
    categories: Vec<String>,
    statuses: &'static [&'static str],
    q: PostsQuery,
    posts: Vec<PostLine>,
    older: Option<String>,
}

fn day(s: Option<&str>, field: &str) -> Result<Option<DateTime<Utc>>, PanelError> {
    match s.map(str::trim).filter(|s| !s.is_empty()) {
        None => Ok(None),
        Some(s) => NaiveDate::parse_from_str(s, "%Y-%m-%d")
            .map(|d| d.and_hms_opt(0, 0, 0).map(|t| t.and_utc()))
            .map_err(|_| PanelError::BadInput(format!("{field}: use a date like 2026-12-31"))),
    }
}

fn nonempty(s: &Option<String>) -> Option<String> {
    s.as_deref()
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
}

/// `GET /posts`: search by source, category, status, dates and words, newest first.
pub async fn posts(
    State(panel): State<Arc<Panel>>,
    ctx: Ctx,
    Query(q): Query<PostsQuery>,
) -> PageResult {
    let store = panel.store();
    let source = match nonempty(&q.source) {
        None => None,
        Some(s) => Some(
            s.parse::<i64>()
                .map_err(|_| PanelError::BadInput("source: pick one from the list".into()))?,
        ),
    };
    let status = nonempty(&q.status);
    if let Some(s) = &status
        && !STATUSES.contains(&s.as_str())
    {
        return Err(PanelError::BadInput(format!("unknown status {s:?}")));
    }
    let filter = PostFilter {
        channel_id: source.map(jobwire_store::ChannelId::from),
        category: nonempty(&q.category),
        status,
        since: day(q.from.as_deref(), "from")?,
        until: day(q.to.as_deref(), "to")?.map(|d| d + Duration::days(1)),
        text: nonempty(&q.q),
        before: q.before.map(PostId::from),
        limit: 50,
    };
    let rows = store.search_posts(&filter).await?;
    let older = (rows.len() == 50)
        .then(|| rows.last().map(|r| r.id.get()))
        .flatten()
        .map(|last| {
            let mut s = url::form_urlencoded::Serializer::new(String::new());
            for (k, v) in [
                ("source", &q.source),
                ("category", &q.category),
                ("status", &q.status),
                ("from", &q.from),
                ("to", &q.to),
                ("q", &q.q),
            ] {
                if let Some(v) = v {
                    s.append_pair(k, v);
                }
            }
            s.append_pair("before", &last.to_string());
            s.finish()
        });
    let sources = store
        .channels()
        .await?
        .into_iter()
        .map(|c| (c.id.get(), c.handle))
        .collect();
    let posts = rows
        .into_iter()
        .map(|row| PostLine {
            snippet: snippet(&row.text, 140),
            when: when(&row.posted_at),
            row,
        })
        .collect();
    Ok(PostsPage {
        b: ctx.chrome("/posts"),
        sources,
        categories: panel.categories(),
        statuses: &STATUSES,
        q,
        posts,
        older,
    }
    .into_response())
}

struct TraceDelivery {
    row: DeliveryRow,
    ids: String,
}

#[derive(Template, WebTemplate)]
#[template(path = "post.html")]
struct PostPage {
    b: Chrome,
    post: PostRow,
    /// The post's link when it may be followed (http, https, tg); else it is shown as text.
    link: Option<String>,
    posted: String,
    received: String,
    rules: String,
    duplicate_of: Option<i64>,
    verdict: Option<ClassificationRecord>,
    route: &'static str,
    deliveries: Vec<TraceDelivery>,
    has_failed: bool,
    categories: Vec<String>,
}

/// A link the panel may render as `<a href>`: the rule the cards and intake follow
/// ([`jobwire_core::format::safe_link`]); any other (`javascript:`, `data:`, …) is shown as
/// text only.
pub(crate) fn followable_link(raw: &str) -> Option<String> {
    jobwire_core::format::safe_link(raw)
}

/// `GET /posts/{id}`: the post's trace, from the text to every delivery.
pub async fn post_trace(
    State(panel): State<Arc<Panel>>,
    ctx: Ctx,
    Path(id): Path<PostId>,
) -> PageResult {
    let store = panel.store();
    let post = store.post(id).await?.ok_or(PanelError::NotFound)?;
    let channel = store
        .channels()
        .await?
        .into_iter()
        .find(|c| c.id == post.channel_id);
    let rules = match channel {
        Some(c) => {
            let rules =
                jobwire_core::rules::ChannelRules::parse(c.include.iter(), c.exclude.iter())
                    .map(|r| jobwire_core::rules::CompiledRules::new(&r));
            match rules {
                Ok(r) => match r.check(&jobwire_core::normalize::normalize(&post.text)) {
                    jobwire_core::rules::RuleDecision::Pass => "passes the rules".to_owned(),
                    jobwire_core::rules::RuleDecision::Excluded { term } => {
                        format!("excluded by \u{201c}{term}\u{201d}")
                    }
                    jobwire_core::rules::RuleDecision::NoIncludeMatched => {
                        "no include term matched".to_owned()
                    }
                },
                Err(e) => format!("rules do not parse: {e}"),
            }
        }
        None => String::new(),
    };
    let duplicate_of = store.duplicate_of(post.id).await?.map(|p| p.get());
    let verdict = store.classification(post.id).await?;
    let route = match &verdict {
        Some(v)
            if v.prompt_version
                .as_deref()
                .is_some_and(|p| !p.starts_with("local")) =>
        {
            "LLM"
        }
        Some(_) => "local",
        None => "",
    };
    let deliveries: Vec<TraceDelivery> = store
        .deliveries_of_post(post.id)
        .await?
        .into_iter()
        .map(|row| TraceDelivery {
            ids: row
                .message_ids
                .iter()
                .map(i64::to_string)
                .collect::<Vec<_>>()
                .join(", "),
            row,
        })
        .collect();
    let has_failed = deliveries
        .iter()
        .any(|d: &TraceDelivery| d.row.status.as_str() == "failed");
    Ok(PostPage {
        b: ctx.chrome("/posts"),
        link: post.url.as_deref().and_then(followable_link),
        has_failed,
        posted: when(&post.posted_at),
        received: when(&post.received_at),
        post,
        rules,
        duplicate_of,
        verdict,
        route,
        deliveries,
        categories: panel.categories(),
    }
    .into_response())
}

/// The label fields of a form: `kind`, and `category` once per ticked box.
pub(super) fn label_from_form(body: &Bytes) -> Label {
    let kind = form_field(body, "kind").unwrap_or_default();
    let categories = url::form_urlencoded::parse(body)
        .filter(|(k, _)| k == "category")
        .map(|(_, v)| v.into_owned())
        .collect();
    Label {
        is_job: kind == "job",
        kind,
        categories,
    }
}

/// `POST /posts/{id}/label`: an admin's label of a post becomes a training example.
pub async fn label_post(
    State(panel): State<Arc<Panel>>,
    ctx: Ctx,
    Path(id): Path<PostId>,
    body: Bytes,
) -> PageResult {
    panel
        .state
        .label_post(&ctx.actor(), id, &label_from_form(&body))
        .await?;
    Ok(done(&format!("/posts/{id}?saved=1")))
}

/// `POST /posts/{id}/reclassify`: the post goes back to the classifier (whichever process
/// runs it picks it up at its next scheduler tick).
pub async fn reclassify_post(
    State(panel): State<Arc<Panel>>,
    ctx: Ctx,
    Path(id): Path<PostId>,
) -> PageResult {
    panel.state.reclassify_post(&ctx.actor(), id).await?;
    Ok(done(&format!("/posts/{id}?requeued=1")))
}

/// `POST /posts/{id}/redeliver`: the job's failed deliveries are sent again (sent ones are
/// not sent twice; blocked chats stay blocked).
pub async fn redeliver_post(
    State(panel): State<Arc<Panel>>,
    ctx: Ctx,
    Path(id): Path<PostId>,
) -> PageResult {
    let n = panel.state.redeliver_post(&ctx.actor(), id).await?;
    Ok(done(&format!("/posts/{id}?redelivered={n}")))
}
