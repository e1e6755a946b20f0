//! What the testkit's tests share: raw HTTP to a fake, where the real clients can't go.

use serde_json::Value;

/// Sends a request and reads the answer: its status and its JSON body.
pub trait Exchange {
    async fn exchange(self) -> (u16, Value);
}

/// [`Exchange`] for the `RequestBuilder` of each reqwest the tests use.
macro_rules! exchange_for {
    ($($reqwest:ident),*) => {$(
        impl Exchange for $reqwest::RequestBuilder {
            async fn exchange(self) -> (u16, Value) {
                let r = self.send().await.expect("send");
                let status = r.status().as_u16();
                (status, r.json().await.expect("json"))
            }
        }
    )*};
}

exchange_for!(reqwest012, reqwest013);
