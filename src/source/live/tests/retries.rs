//! Retries: a 429 waits as long as the server asks, server errors back
//! off, a server that stays overloaded is given up, a 403 is not retried.

use super::*;

#[tokio::test(start_paused = true)]
async fn a_429_is_retried_after_the_time_the_server_asks_for() {
    let fake = Fake::new();
    let mut busy = failure(
        429,
        "TooManyRequests",
        "Too many requests, please try again later.",
    );
    busy.headers.push(("Retry-After", "3".into()));
    fake.script(
        PODS,
        vec![busy, ok(list("Pod", vec![pod("a", "p1")], None))],
    );
    let conn = fake.connection(ReadPolicy::default());
    let started = tokio::time::Instant::now();
    let pods = conn
        .list_pages(PODS, &ListParams::default(), &keep_all)
        .await
        .unwrap();
    assert_eq!(names(&pods), ["p1"]);
    assert_eq!(conn.requests(), 2);
    let waited = started.elapsed();
    assert!(
        waited >= Duration::from_secs(3) && waited < Duration::from_secs(4),
        "waited {waited:?}, the server asked for 3 s"
    );
}

#[tokio::test(start_paused = true)]
async fn server_errors_are_retried_with_a_growing_back_off() {
    let fake = Fake::new();
    fake.script(
        PODS,
        vec![
            failure(500, "InternalError", "etcdserver: leader changed"),
            failure(
                503,
                "ServiceUnavailable",
                "the server is currently unable to handle the request",
            ),
            ok(list("Pod", vec![pod("a", "p1")], None)),
        ],
    );
    let conn = fake.connection(ReadPolicy::default());
    let started = tokio::time::Instant::now();
    let pods = conn
        .list_pages(PODS, &ListParams::default(), &keep_all)
        .await
        .unwrap();
    assert_eq!(names(&pods), ["p1"]);
    assert_eq!(conn.requests(), 3);
    // 200 ms, then 400 ms.
    let waited = started.elapsed();
    assert!(
        waited >= Duration::from_millis(600) && waited < Duration::from_millis(700),
        "waited {waited:?}"
    );
}

#[tokio::test(start_paused = true)]
async fn a_server_that_stays_overloaded_is_given_up_after_the_last_attempt() {
    let fake = Fake::new();
    fake.otherwise(|_, _| Some(failure(503, "ServiceUnavailable", "overloaded")));
    let policy = ReadPolicy {
        max_attempts: 4,
        ..ReadPolicy::default()
    };
    let conn = fake.connection(policy);
    let err = conn
        .list_pages(PODS, &ListParams::default(), &keep_all)
        .await
        .unwrap_err();
    assert!(matches!(err, kube::Error::Api(s) if s.code == 503));
    assert_eq!(conn.requests(), 4);
}

#[tokio::test(start_paused = true)]
async fn a_forbidden_list_is_not_retried() {
    let fake = Fake::new();
    fake.otherwise(|_, _| Some(failure(403, "Forbidden", "pods is forbidden")));
    let conn = fake.connection(ReadPolicy::default());
    let err = conn
        .list_pages(PODS, &ListParams::default(), &keep_all)
        .await
        .unwrap_err();
    assert!(matches!(err, kube::Error::Api(s) if s.code == 403));
    assert_eq!(conn.requests(), 1);
}
