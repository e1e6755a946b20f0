//! The testkit's control endpoints under `/__testkit/` (stats, request log, faults, latency,
//! reset).

use std::time::Duration;

use axum::{
    Json,
    extract::State,
    response::{IntoResponse, Response},
};
use serde::Deserialize;
use serde_json::json;

use super::{FaultPlan, LlmState};

pub(super) async fn tk_stats(State(st): State<LlmState>) -> Response {
    Json(st.stats()).into_response()
}

pub(super) async fn tk_requests(State(st): State<LlmState>) -> Response {
    Json(st.requests_log()).into_response()
}

pub(super) async fn tk_faults(State(st): State<LlmState>, Json(plan): Json<FaultPlan>) -> Response {
    st.set_faults(plan);
    Json(json!({"ok": true})).into_response()
}

#[derive(Deserialize)]
pub(super) struct LatencyBody {
    latency_ms: u64,
}

pub(super) async fn tk_latency(State(st): State<LlmState>, Json(b): Json<LatencyBody>) -> Response {
    st.set_latency(Duration::from_millis(b.latency_ms));
    Json(json!({"ok": true})).into_response()
}

pub(super) async fn tk_reset(State(st): State<LlmState>) -> Response {
    st.reset_stats();
    Json(json!({"ok": true})).into_response()
}
