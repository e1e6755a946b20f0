//! The Prompt page: the classification prompt's versions (and the built-in one), a form to
//! write a new version, trying a version (or the text being edited) on a post or a pasted
//! text with the configured LLM, and making a version current.

use std::sync::Arc;

use askama::Template;
use askama_web::WebTemplate;
use axum::body::Bytes;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::IntoResponse;
use chrono::Utc;
use jobwire_classify::llm::{PROMPT_TEMPLATE, PROMPT_VERSION, check_template, verdict_of_answer};
use jobwire_core::CategorySlug;
use jobwire_store::{PostId, PromptVersionId, PromptVersionRow};
use serde::Deserialize;

use super::{AuditNote, Chrome, Ctx, PageResult, Panel, PanelError, form_field, see_other};
use super::{snippet, when};

/// The longest version name, in characters.
pub const MAX_NAME_CHARS: usize = 64;

/// Why a version name cannot be used.
pub fn check_name(name: &str) -> Result<(), String> {
    if name.is_empty() {
        return Err("a version needs a name, e.g. classify.v6".to_owned());
    }
    if name.chars().count() > MAX_NAME_CHARS {
        return Err(format!(
            "the name is longer than {MAX_NAME_CHARS} characters"
        ));
    }
    if !name
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_'))
    {
        return Err("a name has only letters, digits, dots, dashes and underscores".to_owned());
    }
    if name.eq_ignore_ascii_case(PROMPT_VERSION) {
        return Err(format!("{PROMPT_VERSION} is the built-in version's name"));
    }
    Ok(())
}

/// A name for the next version: the current one's with its last number raised
/// (`classify.v4` → `classify.v5`), past names that are taken.
fn next_name(current: &str, taken: &[String]) -> String {
    let stem = current.trim_end_matches(|c: char| c.is_ascii_digit());
    let mut n: u64 = current[stem.len()..].parse().unwrap_or(1);
    loop {
        n += 1;
        let name = format!("{stem}{n}");
        if !taken.iter().any(|t| t.eq_ignore_ascii_case(&name)) && check_name(&name).is_ok() {
            return name;
        }
    }
}

/// One version as the list shows it.
struct VersionLine {
    id: PromptVersionId,
    name: String,
    created_by: String,
    created_at: String,
    activated_by: String,
    activated_at: String,
    current: bool,
}

/// The try form as it was sent.
#[derive(Debug, Default)]
struct TryForm {
    post_id: String,
    sample: String,
    /// `edited`, `built-in`, or a version's id.
    with: String,
}

impl TryForm {
    fn with_is(&self, value: &str) -> bool {
        self.with == value
    }

    fn with_version(&self, id: &PromptVersionId) -> bool {
        self.with == id.to_string()
    }
}

/// What the model answered when a prompt was tried.
struct TryAnswer {
    /// The prompt tried (a version's name, or the text being edited).
    tried: String,
    /// The model's JSON (indented when it parses).
    raw: String,
    kind: String,
    categories: String,
    confidence: String,
    /// Why the answer could not be read as a verdict.
    unreadable: Option<String>,
}

#[derive(Template, WebTemplate)]
#[template(path = "prompt.html")]
struct PromptPage {
    b: Chrome,
    versions: Vec<VersionLine>,
    built_in: &'static str,
    built_in_current: bool,
    name: String,
    text: String,
    form_error: Option<String>,
    can_try: bool,
    tried: TryForm,
    try_error: Option<String>,
    answer: Option<TryAnswer>,
}

/// What the page shows besides the list.
struct Shown {
    name: Option<String>,
    text: Option<String>,
    form_error: Option<String>,
    tried: TryForm,
    try_error: Option<String>,
    answer: Option<TryAnswer>,
}

impl Shown {
    fn empty() -> Self {
        Self {
            name: None,
            text: None,
            form_error: None,
            tried: TryForm {
                with: "edited".to_owned(),
                ..TryForm::default()
            },
            try_error: None,
            answer: None,
        }
    }
}

async fn render(
    panel: &Panel,
    mut b: Chrome,
    shown: Shown,
    status: StatusCode,
    copy_of: Option<&str>,
    flash: Option<String>,
) -> PageResult {
    let store = panel.store();
    let rows = store.prompt_versions().await?;
    let current = store.current_prompt_version().await?;
    let current_id = current.as_ref().map(|c| c.id);
    let taken: Vec<String> = rows.iter().map(|r| r.name.clone()).collect();
    let copy = match copy_of {
        Some("built-in") => None,
        Some(id) => id
            .parse::<PromptVersionId>()
            .ok()
            .and_then(|id| rows.iter().find(|r| r.id == id)),
        None => current.as_ref(),
    };
    let (base_name, base_text) = match copy {
        Some(v) => (v.name.as_str(), v.text.as_str()),
        None => (PROMPT_VERSION, PROMPT_TEMPLATE),
    };
    b.flash = flash;
    let versions = rows
        .iter()
        .map(|r| VersionLine {
            id: r.id,
            name: r.name.clone(),
            created_by: r.created_by.clone(),
            created_at: when(&r.created_at),
            activated_by: r.activated_by.clone().unwrap_or_default(),
            activated_at: r.activated_at.as_ref().map(when).unwrap_or_default(),
            current: Some(r.id) == current_id,
        })
        .collect();
    let mut r = PromptPage {
        b,
        versions,
        built_in: PROMPT_VERSION,
        built_in_current: current_id.is_none(),
        name: shown.name.unwrap_or_else(|| next_name(base_name, &taken)),
        text: shown.text.unwrap_or_else(|| base_text.to_owned()),
        form_error: shown.form_error,
        can_try: panel.state.prompt_lab().is_some(),
        tried: shown.tried,
        try_error: shown.try_error,
        answer: shown.answer,
    }
    .into_response();
    *r.status_mut() = status;
    Ok(r)
}

#[derive(Debug, Deserialize, Default)]
pub struct PromptQuery {
    /// A version to start the new one from (`built-in` or an id); default the current.
    edit: Option<String>,
    created: Option<i64>,
    activated: Option<i64>,
}

/// `GET /prompt` (`?edit=ID|built-in`: the new version's form starts from that one).
pub async fn page(
    State(panel): State<Arc<Panel>>,
    ctx: Ctx,
    Query(q): Query<PromptQuery>,
) -> PageResult {
    let t = ctx.t;
    let flash = if q.activated.is_some() {
        Some(t.prompt_activated_flash.to_owned())
    } else if q.created.is_some() {
        Some(t.prompt_created_flash.to_owned())
    } else {
        None
    };
    render(
        &panel,
        ctx.chrome("/prompt"),
        Shown::empty(),
        StatusCode::OK,
        q.edit.as_deref(),
        flash,
    )
    .await
}

fn try_form(body: &Bytes) -> TryForm {
    TryForm {
        post_id: form_field(body, "post_id").unwrap_or_default(),
        sample: form_field(body, "sample").unwrap_or_default(),
        with: form_field(body, "with").unwrap_or_else(|| "edited".to_owned()),
    }
}

/// `POST /prompt` (`name`, `text`): saves a new version, not current yet. Refused with the
/// reason (nothing saved) when the name is taken or malformed, or the text lacks a
/// placeholder the classifier fills.
pub async fn create(State(panel): State<Arc<Panel>>, ctx: Ctx, body: Bytes) -> PageResult {
    let name = form_field(&body, "name")
        .unwrap_or_default()
        .trim()
        .to_owned();
    let text = form_field(&body, "text")
        .unwrap_or_default()
        .replace("\r\n", "\n");
    let refuse = |error: String| Shown {
        name: Some(name.clone()),
        text: Some(text.clone()),
        form_error: Some(error),
        tried: try_form(&body),
        ..Shown::empty()
    };
    let problem = check_name(&name)
        .err()
        .or_else(|| check_template(&text).err().map(|e| e.to_string()));
    if let Some(problem) = problem {
        return render(
            &panel,
            ctx.chrome("/prompt"),
            refuse(problem),
            StatusCode::UNPROCESSABLE_ENTITY,
            None,
            None,
        )
        .await;
    }
    let store = panel.store();
    let Some(row) = store
        .create_prompt_version(&name, &text, &ctx.session.username, Utc::now())
        .await?
    else {
        return render(
            &panel,
            ctx.chrome("/prompt"),
            refuse(format!("a version named {name} exists already")),
            StatusCode::UNPROCESSABLE_ENTITY,
            None,
            None,
        )
        .await;
    };
    tracing::info!(user = %ctx.session.username, version = %row.name, "panel: prompt version written");
    let mut r = see_other(&format!("/prompt?created={}&edit={}", row.id, row.id));
    r.extensions_mut().insert(AuditNote {
        action: "prompt.create",
        target: format!("prompt {} {}", row.id, row.name),
        detail: format!("{} characters", row.text.chars().count()),
    });
    Ok(r)
}

/// `POST /prompt/{id}/activate`: the version becomes current (who and when are recorded);
/// running classifiers use it within seconds.
pub async fn activate(
    State(panel): State<Arc<Panel>>,
    ctx: Ctx,
    Path(id): Path<PromptVersionId>,
) -> PageResult {
    let store = panel.store();
    let version = store
        .prompt_version(id)
        .await?
        .ok_or(PanelError::NotFound)?;
    check_template(&version.text).map_err(|e| PanelError::BadInput(e.to_string()))?;
    if !store
        .activate_prompt_version(id, &ctx.session.username, Utc::now())
        .await?
    {
        return Err(PanelError::NotFound);
    }
    tracing::info!(user = %ctx.session.username, version = %version.name, "panel: prompt version made current");
    let mut r = see_other(&format!("/prompt?activated={id}"));
    r.extensions_mut().insert(AuditNote {
        action: "prompt.activate",
        target: format!("prompt {id} {}", version.name),
        detail: String::new(),
    });
    Ok(r)
}

/// `POST /prompt/try` (`post_id` or `sample`; `with` = `edited` (the form's `text`),
/// `built-in` or a version's id): asks the configured LLM and shows its answer and the
/// verdict read from it. Without an LLM configured the page says trying is not available.
pub async fn try_it(State(panel): State<Arc<Panel>>, ctx: Ctx, body: Bytes) -> PageResult {
    let name = form_field(&body, "name").unwrap_or_default();
    let text = form_field(&body, "text")
        .unwrap_or_default()
        .replace("\r\n", "\n");
    let tried = try_form(&body);
    let mut shown = Shown {
        name: Some(name),
        text: Some(text.clone()),
        ..Shown::empty()
    };
    let outcome = trial(&panel, &tried, &text).await;
    shown.tried = tried;
    let status = match outcome {
        Ok(Some(answer)) => {
            shown.answer = Some(answer);
            StatusCode::OK
        }
        // The page says trying is not available.
        Ok(None) => StatusCode::OK,
        Err(Refusal::Input(e)) => {
            shown.try_error = Some(e);
            StatusCode::UNPROCESSABLE_ENTITY
        }
        Err(Refusal::Llm(e)) => {
            shown.try_error = Some(e);
            StatusCode::OK
        }
        Err(Refusal::Panel(e)) => return Err(e),
    };
    let mut r = render(&panel, ctx.chrome("/prompt"), shown, status, None, None).await?;
    if status == StatusCode::OK && panel.state.prompt_lab().is_some() {
        let tried = form_field(&body, "with").unwrap_or_default();
        r.extensions_mut().insert(AuditNote {
            action: "prompt.try",
            target: format!("prompt {tried}"),
            detail: String::new(),
        });
    }
    Ok(r)
}

enum Refusal {
    /// The form cannot be tried as sent.
    Input(String),
    /// The LLM did not answer.
    Llm(String),
    Panel(PanelError),
}

impl From<PanelError> for Refusal {
    fn from(e: PanelError) -> Self {
        Self::Panel(e)
    }
}

impl From<jobwire_store::StoreError> for Refusal {
    fn from(e: jobwire_store::StoreError) -> Self {
        Self::Panel(e.into())
    }
}

/// Tries the form's prompt on its text; `None` when no LLM is configured.
async fn trial(panel: &Panel, form: &TryForm, edited: &str) -> Result<Option<TryAnswer>, Refusal> {
    let Some(lab) = panel.state.prompt_lab() else {
        return Ok(None);
    };
    let store = panel.store();
    let (tried, template): (String, String) = match form.with.as_str() {
        "edited" | "" => {
            check_template(edited).map_err(|e| Refusal::Input(e.to_string()))?;
            ("the text being edited".to_owned(), edited.to_owned())
        }
        "built-in" => (PROMPT_VERSION.to_owned(), PROMPT_TEMPLATE.to_owned()),
        id => {
            let version: Option<PromptVersionRow> = match id.parse::<PromptVersionId>() {
                Ok(id) => store.prompt_version(id).await?,
                Err(_) => None,
            };
            let v = version.ok_or_else(|| Refusal::Input(format!("no prompt version {id}")))?;
            (v.name, v.text)
        }
    };
    let post_id = form.post_id.trim().trim_start_matches('#');
    let text = if !post_id.is_empty() {
        let id = post_id
            .parse::<i64>()
            .map_err(|_| Refusal::Input(format!("{post_id:?} is not a post id (a number)")))?;
        store
            .post(PostId::from(id))
            .await?
            .ok_or_else(|| Refusal::Input(format!("there is no post {id}")))?
            .text
    } else if !form.sample.trim().is_empty() {
        form.sample.clone()
    } else {
        return Err(Refusal::Input(
            "give a post id or paste a text to try the prompt on".to_owned(),
        ));
    };
    let raw = lab.try_prompt(&template, &text).await.map_err(|e| {
        tracing::warn!(error = %e, "panel: trying a prompt failed");
        Refusal::Llm(format!("the LLM did not answer: {e}"))
    })?;
    let slugs: Vec<CategorySlug> = panel
        .categories()
        .iter()
        .filter_map(|c| CategorySlug::parse(c).ok())
        .collect();
    let shown_raw = serde_json::from_str::<serde_json::Value>(&raw)
        .ok()
        .and_then(|v| serde_json::to_string_pretty(&v).ok())
        .unwrap_or_else(|| raw.clone());
    let mut answer = TryAnswer {
        tried,
        raw: shown_raw,
        kind: String::new(),
        categories: String::new(),
        confidence: String::new(),
        unreadable: None,
    };
    match verdict_of_answer(&raw, &slugs) {
        Ok(v) => {
            answer.kind = v.kind.as_str().to_owned();
            answer.categories = v
                .categories
                .iter()
                .map(CategorySlug::as_str)
                .collect::<Vec<_>>()
                .join(", ");
            answer.confidence = format!("{:.2}", v.confidence);
        }
        Err(why) => answer.unreadable = Some(snippet(&why, 300)),
    }
    Ok(Some(answer))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_checked_and_the_next_one_is_suggested() {
        assert!(check_name("classify.v6").is_ok());
        assert!(check_name("").is_err());
        assert!(check_name("has space").is_err());
        assert!(check_name("Classify.V5").is_err(), "the built-in's name");
        assert!(check_name(&"x".repeat(MAX_NAME_CHARS + 1)).is_err());
        assert_eq!(next_name("classify.v5", &[]), "classify.v6");
        assert_eq!(
            next_name("classify.v5", &["classify.v6".to_owned()]),
            "classify.v7"
        );
        // The built-in's name is never suggested.
        assert_eq!(next_name("classify.v4", &[]), "classify.v6");
        assert_eq!(next_name("mine", &[]), "mine2");
    }
}
