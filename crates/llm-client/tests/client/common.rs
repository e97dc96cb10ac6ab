//! What the client's tests share: a server on a free port and its statistics.

use autoeval_mock_llm::{router, MockConfig, Stats};

/// Serves `app` on a free port of the loopback; its base URL.
pub async fn serve_app(app: axum::Router) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    format!("http://{addr}")
}

/// Serves the mock model server configured by `config`; its base URL.
pub async fn serve(config: MockConfig) -> String {
    serve_app(router(config)).await
}

/// What the mock server at `base` has seen.
pub async fn stats(base: &str) -> Stats {
    reqwest::get(format!("{base}/stats"))
        .await
        .unwrap()
        .json()
        .await
        .unwrap()
}
