//! The Sources page: Telegram channels and chats and feeds, their rules with a live
//! preview over each source's last 200 posts, enable/disable and removal.

use std::sync::Arc;

use askama::Template;
use askama_web::WebTemplate;
use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::IntoResponse;
use chrono::Utc;
use jobwire_core::normalize::normalize;
use jobwire_core::rules::{ChannelRules, CompiledRules, RuleDecision, Term};
use jobwire_core::source::{SourceEdit, SourceErrors, SourceInput, terms};
use jobwire_store::{ChannelId, ChannelRow, SourceStats};

use super::snippet;
use super::{AuditNote, Chrome, Ctx, PageResult, Panel, PanelError, form_field, see_other};

/// How many of a source's posts the preview runs the rules over.
pub const PREVIEW_POSTS: u32 = 200;

/// A piece of a post's text: marked when a rule term matched it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Piece {
    pub text: String,
    pub marked: bool,
}

/// The terms' matches in `text`, as pieces. Terms match the normalized text; the words they
/// matched are marked wherever they occur in the text as written (case-insensitively).
pub fn highlight(text: &str, terms: &[Term]) -> Vec<Piece> {
    let normalized = normalize(text);
    let mut words: Vec<String> = Vec::new();
    for term in terms {
        let pattern = term.pattern();
        if pattern.is_empty() {
            continue;
        }
        let mut from = 0;
        while let Some(at) = normalized[from..].find(pattern) {
            let start = from + at;
            let end = start + pattern.len();
            if term.accepts_match(&normalized, start, end) {
                words.push(pattern.trim_start_matches('#').to_owned());
            }
            from = end;
        }
    }
    words.sort_by_key(|w| std::cmp::Reverse(w.chars().count()));
    words.dedup();
    let chars: Vec<char> = text.chars().collect();
    let lower: Vec<char> = text
        .chars()
        .map(|c| c.to_lowercase().next().unwrap_or(c))
        .collect();
    let mut marked = vec![false; chars.len()];
    for w in &words {
        let w: Vec<char> = w.chars().collect();
        if w.is_empty() || w.len() > lower.len() {
            continue;
        }
        for i in 0..=lower.len() - w.len() {
            if lower[i..i + w.len()] == w[..] {
                marked[i..i + w.len()].fill(true);
            }
        }
    }
    let mut pieces: Vec<Piece> = Vec::new();
    for (c, m) in chars.into_iter().zip(marked) {
        match pieces.last_mut() {
            Some(p) if p.marked == m => p.text.push(c),
            _ => pieces.push(Piece {
                text: c.to_string(),
                marked: m,
            }),
        }
    }
    pieces
}

/// One source as the list shows it.
struct SourceLine {
    row: ChannelRow,
    joined: String,
    last_post: String,
    per_day: String,
    job_share: String,
    last_error: String,
}

impl SourceLine {
    fn new(row: ChannelRow, stats: Option<&SourceStats>) -> Self {
        let when =
            |t: Option<chrono::DateTime<Utc>>| t.map(|t| super::when(&t)).unwrap_or_default();
        Self {
            joined: stats.map(|s| when(s.joined_at)).unwrap_or_default(),
            last_post: stats.map(|s| when(s.last_post_at)).unwrap_or_default(),
            per_day: stats
                .map(|s| format!("{:.1}", s.posts_per_day))
                .unwrap_or_default(),
            job_share: stats
                .and_then(|s| s.job_share)
                .map(|j| format!("{:.0}%", j * 100.0))
                .unwrap_or_default(),
            last_error: stats.and_then(|s| s.last_error.clone()).unwrap_or_default(),
            row,
        }
    }
}

/// What the add form held, to show it again with its errors.
#[derive(Debug, Default)]
struct AddForm {
    address: String,
    name: String,
    title: String,
    interval_secs: String,
}

#[derive(Template, WebTemplate)]
#[template(path = "sources.html")]
struct SourcesPage {
    b: Chrome,
    sources: Vec<SourceLine>,
    form: AddForm,
    errors: Option<SourceErrors>,
}

impl SourcesPage {
    fn error(&self, field: &str) -> Option<&str> {
        self.errors.as_ref().and_then(|e| e.field(field))
    }
}

/// `GET /sources`.
pub async fn list(State(panel): State<Arc<Panel>>, ctx: Ctx) -> PageResult {
    render_list(
        &panel,
        ctx.chrome("/sources"),
        AddForm::default(),
        None,
        StatusCode::OK,
    )
    .await
}

/// The list again with the form as typed and why it was refused (422).
async fn refuse(panel: &Panel, ctx: &Ctx, form: AddForm, e: SourceErrors) -> PageResult {
    let b = ctx.chrome("/sources");
    render_list(panel, b, form, Some(e), StatusCode::UNPROCESSABLE_ENTITY).await
}

async fn render_list(
    panel: &Panel,
    b: Chrome,
    form: AddForm,
    errors: Option<SourceErrors>,
    status: StatusCode,
) -> PageResult {
    let store = panel.store();
    let now = Utc::now();
    let stats = store
        .source_stats(now - chrono::Duration::days(7), now)
        .await?;
    let sources = store
        .sources()
        .await?
        .into_iter()
        .map(|row| {
            let s = stats.iter().find(|s| s.channel_id == row.id);
            SourceLine::new(row, s)
        })
        .collect();
    let mut r = SourcesPage {
        b,
        sources,
        form,
        errors,
    }
    .into_response();
    *r.status_mut() = status;
    Ok(r)
}

/// `POST /sources` (`address`, and for a feed `name`, `interval_secs`; `title`): adds an
/// enabled source without rules; the running parsers pick it up within seconds.
pub async fn add(State(panel): State<Arc<Panel>>, ctx: Ctx, body: Bytes) -> PageResult {
    let field = |name: &str| form_field(&body, name).unwrap_or_default();
    let form = AddForm {
        address: field("address"),
        name: field("name"),
        title: field("title"),
        interval_secs: field("interval_secs"),
    };
    let mut input = SourceInput {
        address: form.address.clone(),
        name: form.name.clone(),
        title: form.title.clone(),
        enabled: true,
        ..SourceInput::default()
    };
    let interval = form.interval_secs.trim();
    let bad_interval = if interval.is_empty() {
        None
    } else {
        match interval.parse::<u64>() {
            Ok(n) => {
                input.interval_secs = Some(n);
                None
            }
            Err(_) => Some(SourceErrors(vec![jobwire_core::source::FieldError {
                field: "interval_secs",
                message: "a whole number of seconds".into(),
            }])),
        }
    };
    let spec = match (bad_interval, input.parse()) {
        (None, Ok(spec)) => spec,
        (Some(e), _) | (None, Err(e)) => return refuse(&panel, &ctx, form, e).await,
    };
    let store = panel.store();
    if let Some(known) = store.source_by_handle(&spec.handle).await?
        && known.removed_at.is_none()
        && known.kind != jobwire_core::source::SourceKind::External
    {
        let e = SourceErrors(vec![jobwire_core::source::FieldError {
            field: "address",
            message: format!("{} is in the list already", spec.handle),
        }]);
        return refuse(&panel, &ctx, form, e).await;
    }
    let row = store.add_source(&spec, Utc::now()).await?;
    let mut r = see_other(&format!("/sources/{}", row.id.get()));
    r.extensions_mut().insert(AuditNote {
        action: "source.add",
        target: format!("source {}", row.id.get()),
        // The feed's host only: its URL's path and query can carry a token.
        detail: match &spec.feed {
            Some(f) => format!("{} {}", spec.handle, f.host()),
            None => spec.handle.clone(),
        },
    });
    Ok(r)
}

struct PreviewLine {
    id: i64,
    passes: bool,
    why: String,
    pieces: Vec<Piece>,
}

#[derive(Template, WebTemplate)]
#[template(path = "source.html")]
struct SourcePage {
    b: Chrome,
    source: ChannelRow,
    include: String,
    exclude: String,
    errors: Vec<String>,
    preview: Preview,
}

/// A source's page: its rules as typed (`include`, `exclude`), what is wrong with them, and
/// their preview.
fn source_page(
    ctx: &Ctx,
    source: ChannelRow,
    (include, exclude): (String, String),
    errors: Vec<String>,
    preview: Preview,
) -> SourcePage {
    SourcePage {
        b: ctx.chrome("/sources"),
        source,
        include,
        exclude,
        errors,
        preview,
    }
}

#[derive(Template, WebTemplate)]
#[template(path = "preview.html")]
struct Preview {
    errors: Vec<String>,
    lines: Vec<PreviewLine>,
    passing: usize,
    total: usize,
}

async fn source_row(panel: &Panel, id: ChannelId) -> Result<ChannelRow, PanelError> {
    panel
        .store()
        .source(id)
        .await?
        .filter(|c| c.removed_at.is_none())
        .ok_or(PanelError::NotFound)
}

/// Runs rules (as typed) over the source's last posts.
async fn preview_of(
    panel: &Panel,
    source: &ChannelRow,
    include: &[String],
    exclude: &[String],
) -> Result<Preview, PanelError> {
    let rules = match ChannelRules::parse(include.iter(), exclude.iter()) {
        Ok(r) => r,
        Err(e) => {
            return Ok(Preview {
                errors: vec![e.to_string()],
                lines: Vec::new(),
                passing: 0,
                total: 0,
            });
        }
    };
    let compiled = CompiledRules::new(&rules);
    let terms: Vec<Term> = include
        .iter()
        .chain(exclude)
        .filter_map(|t| Term::parse(t).ok())
        .collect();
    let posts = panel
        .store()
        .channel_recent_texts(source.id, PREVIEW_POSTS)
        .await?;
    let mut lines = Vec::with_capacity(posts.len());
    for (id, text) in posts {
        let decision = compiled.check(&normalize(&text));
        let (passes, why) = match decision {
            RuleDecision::Pass => (true, String::new()),
            RuleDecision::Excluded { term } => (false, format!("excluded: {term}")),
            RuleDecision::NoIncludeMatched => (false, "no include term".to_owned()),
        };
        lines.push(PreviewLine {
            id: id.get(),
            passes,
            why,
            pieces: highlight(&snippet(&text, 400), &terms),
        });
    }
    Ok(Preview {
        errors: Vec::new(),
        passing: lines.iter().filter(|l| l.passes).count(),
        total: lines.len(),
        lines,
    })
}

/// `GET /sources/{id}`: the source's rules, with the preview of its current rules.
pub async fn show(
    State(panel): State<Arc<Panel>>,
    ctx: Ctx,
    Path(id): Path<ChannelId>,
) -> PageResult {
    let source = source_row(&panel, id).await?;
    let preview = preview_of(&panel, &source, &source.include, &source.exclude).await?;
    let typed = (source.include.join("\n"), source.exclude.join("\n"));
    Ok(source_page(&ctx, source, typed, Vec::new(), preview).into_response())
}

/// `POST /sources/{id}/preview` (`include`, `exclude`): the preview alone (htmx, as you
/// type); without JavaScript the Preview button posts here and gets the whole page.
pub async fn preview(
    State(panel): State<Arc<Panel>>,
    ctx: Ctx,
    Path(id): Path<ChannelId>,
    headers: axum::http::HeaderMap,
    body: Bytes,
) -> PageResult {
    let source = source_row(&panel, id).await?;
    let include = form_field(&body, "include").unwrap_or_default();
    let exclude = form_field(&body, "exclude").unwrap_or_default();
    let preview = preview_of(&panel, &source, &terms(&include), &terms(&exclude)).await?;
    if headers.get("hx-request").is_some() {
        return Ok(preview.into_response());
    }
    let errors = preview.errors.clone();
    Ok(source_page(&ctx, source, (include, exclude), errors, preview).into_response())
}

/// `POST /sources/{id}` (`title`, `include`, `exclude`): saves the rules; refused with the
/// reason when a term does not parse (nothing is saved then). The next post of the source
/// meets the new rules.
pub async fn update(
    State(panel): State<Arc<Panel>>,
    ctx: Ctx,
    Path(id): Path<ChannelId>,
    body: Bytes,
) -> PageResult {
    let source = source_row(&panel, id).await?;
    let include_raw = form_field(&body, "include").unwrap_or_default();
    let exclude_raw = form_field(&body, "exclude").unwrap_or_default();
    let edit = SourceEdit {
        title: form_field(&body, "title"),
        enabled: source.enabled,
        include: terms(&include_raw),
        exclude: terms(&exclude_raw),
    };
    let edit = match edit.check() {
        Ok(edit) => edit,
        Err(e) => {
            let preview = preview_of(&panel, &source, &edit.include, &edit.exclude).await?;
            let errors =
                e.0.iter()
                    .map(|f| format!("{}: {}", f.field, f.message))
                    .collect();
            let typed = (include_raw, exclude_raw);
            let mut r = source_page(&ctx, source, typed, errors, preview).into_response();
            *r.status_mut() = StatusCode::UNPROCESSABLE_ENTITY;
            return Ok(r);
        }
    };
    let detail = format!(
        "include: {}; exclude: {}",
        edit.include.join(", "),
        edit.exclude.join(", ")
    );
    panel
        .store()
        .update_source(source.id, &edit, Utc::now())
        .await?
        .ok_or(PanelError::NotFound)?;
    let mut r = see_other(&format!("/sources/{id}?saved=1"));
    r.extensions_mut().insert(AuditNote {
        action: "source.rules",
        target: format!("source {id} {}", source.handle),
        detail,
    });
    Ok(r)
}

/// `POST /sources/{id}/enabled` (`enabled` = `1` or `0`): a disabled source is not read.
pub async fn set_enabled(
    State(panel): State<Arc<Panel>>,
    Path(id): Path<ChannelId>,
    body: Bytes,
) -> PageResult {
    let source = source_row(&panel, id).await?;
    let enabled = form_field(&body, "enabled").as_deref() == Some("1");
    let edit = SourceEdit {
        title: source.title.clone(),
        enabled,
        include: source.include.clone(),
        exclude: source.exclude.clone(),
    };
    panel
        .store()
        .update_source(source.id, &edit, Utc::now())
        .await?
        .ok_or(PanelError::NotFound)?;
    let mut r = see_other("/sources");
    r.extensions_mut().insert(AuditNote {
        action: if enabled {
            "source.enable"
        } else {
            "source.disable"
        },
        target: format!("source {id} {}", source.handle),
        detail: String::new(),
    });
    Ok(r)
}

/// `POST /sources/{id}/remove`: no longer read or listed; its posts stay.
pub async fn remove(State(panel): State<Arc<Panel>>, Path(id): Path<ChannelId>) -> PageResult {
    let source = source_row(&panel, id).await?;
    panel.store().remove_source(source.id, Utc::now()).await?;
    let mut r = see_other("/sources");
    r.extensions_mut().insert(AuditNote {
        action: "source.remove",
        target: format!("source {id} {}", source.handle),
        detail: String::new(),
    });
    Ok(r)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matched_words_are_marked_in_the_text_as_written() {
        let terms = [Term::parse("дизайн").unwrap_or_else(|_| Term::Word("x".into()))];
        let pieces = highlight("Ищем Дизайнера на лендинг", &terms);
        let marked: Vec<&str> = pieces
            .iter()
            .filter(|p| p.marked)
            .map(|p| p.text.as_str())
            .collect();
        assert_eq!(marked, ["Дизайн"]);
        let all: String = pieces.iter().map(|p| p.text.as_str()).collect();
        assert_eq!(all, "Ищем Дизайнера на лендинг");
    }
}
