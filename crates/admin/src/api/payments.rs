//! `GET /api/payments[?chat_id=&limit=]`, `POST /api/payments/{charge_id}/refund`.

use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::rejection::{PathRejection, QueryRejection};
use axum::extract::{Path, Query, State};
use serde::Deserialize;
use serde_json::json;

use super::common::{ApiResult, Who, json_body, ok};
use crate::ops::ChargeId;
use crate::state::AdminState;

#[derive(Debug, Deserialize)]
pub(super) struct PaymentsQuery {
    chat_id: Option<i64>,
    limit: Option<u32>,
}

/// `GET /api/payments[?chat_id=&limit=]`: the ledger, newest first (at most 1000 rows).
pub(super) async fn list_payments(
    State(api): State<Arc<AdminState>>,
    query: Result<Query<PaymentsQuery>, QueryRejection>,
) -> ApiResult {
    let Query(q) = query?;
    let rows = api
        .store()
        .ledger(q.chat_id, q.limit.unwrap_or(100).clamp(1, 1000))
        .await?;
    let rows: Vec<_> = rows
        .iter()
        .map(|r| {
            json!({
                "id": r.id,
                "kind": r.kind.as_str(),
                "charge_id": r.charge_id,
                "provider_charge_id": r.provider_charge_id,
                "chat_id": r.chat_id,
                "plan_id": r.plan_id,
                "amount": r.amount,
                "currency": r.currency,
                "is_recurring": r.is_recurring,
                "is_first_recurring": r.is_first_recurring,
                "subscription_expires_at": r.subscription_expires_at,
                "source": r.source.as_str(),
                "created_at": r.created_at,
            })
        })
        .collect();
    ok(json!({ "payments": rows }))
}

/// Why an admin refunds (optional; kept in the audit log).
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RefundBody {
    reason: Option<String>,
}

/// `POST /api/payments/{charge_id}/refund` (`{"reason": …}`, optional): refunds a Stars
/// payment through Telegram, records it in the ledger and ends the access it bought.
pub(super) async fn refund_payment(
    State(api): State<Arc<AdminState>>,
    Who(actor): Who,
    charge: Result<Path<String>, PathRejection>,
    body: Bytes,
) -> ApiResult {
    let Path(charge) = charge?;
    let reason = if body.iter().all(u8::is_ascii_whitespace) {
        None
    } else {
        let b: RefundBody = json_body(&body)?;
        b.reason
    };
    let done = api
        .refund(&actor, &ChargeId(charge.clone()), reason.as_deref())
        .await?;
    ok(json!({
        "refunded": charge,
        "chat_id": done.chat_id,
        "amount": done.payment.amount,
        "currency": done.payment.currency,
    }))
}
