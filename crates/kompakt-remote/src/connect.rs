//! Clients for URLs, one per server and configuration, kept for the life of the process so
//! that later opens reuse its connections; and object_store's errors as `io::Error`s that
//! name the URL.

use object_store::aws::AmazonS3Builder;
use object_store::http::HttpBuilder;
use object_store::path::Path as ObjectPath;
use object_store::{ClientConfigKey, ObjectStore, RetryConfig};
use std::collections::HashMap;
use std::io;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use url::Url;

static CLIENTS: Mutex<Option<HashMap<String, Arc<dyn ObjectStore>>>> = Mutex::new(None);

/// Transient failures (5xx, timeouts, dropped connections) are retried a few times, with
/// backoff, within seconds: a wrong endpoint fails soon instead of after object_store's
/// default three minutes.
fn retry() -> RetryConfig {
    RetryConfig {
        max_retries: 4,
        retry_timeout: Duration::from_secs(20),
        ..RetryConfig::default()
    }
}

/// The AWS settings of the environment, part of a client's identity: a process that changes
/// them (a test starting its own server) gets a new client.
fn aws_environment() -> Vec<(String, String)> {
    let mut vars: Vec<(String, String)> = std::env::vars().filter(|(k, _)| k.starts_with("AWS_")).collect();
    vars.sort();
    vars
}

fn s3_endpoint(env: &[(String, String)]) -> Option<&str> {
    ["AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL", "AWS_ENDPOINT"]
        .iter()
        .find_map(|name| env.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str()))
}

/// The client for `url`'s server and the object's path on it.
pub(crate) fn connect(url: &Url) -> io::Result<(Arc<dyn ObjectStore>, ObjectPath)> {
    let invalid = |why: String| io::Error::new(io::ErrorKind::InvalidInput, format!("{url}: {why}"));
    if url.query().is_some() {
        return Err(invalid(
            "URLs with a query (such as presigned ones) are not supported yet".into(),
        ));
    }
    let path = ObjectPath::from_url_path(url.path()).map_err(|e| invalid(format!("not an object path ({e})")))?;
    let scheme = url.scheme().to_ascii_lowercase();
    let host = url.host_str().unwrap_or_default();
    let origin = match url.port() {
        Some(port) => format!("{scheme}://{host}:{port}"),
        None => format!("{scheme}://{host}"),
    };
    let env = aws_environment();
    let key = if scheme.starts_with("s3") {
        format!("{origin}|{env:?}")
    } else {
        origin.clone()
    };
    let mut clients = CLIENTS.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(client) = clients.get_or_insert_with(HashMap::new).get(&key) {
        return Ok((Arc::clone(client), path));
    }
    let client: Arc<dyn ObjectStore> = match scheme.as_str() {
        "s3" | "s3a" => {
            let mut builder = AmazonS3Builder::from_env()
                .with_url(format!("s3://{host}"))
                .with_retry(retry());
            // An endpoint given as http:// (MinIO, a test server) is meant: allow it.
            if s3_endpoint(&env).is_some_and(|e| e.starts_with("http://")) {
                builder = builder.with_allow_http(true);
            }
            Arc::new(builder.build().map_err(|e| describe(e, url.as_str()))?)
        }
        "http" | "https" => {
            let mut builder = HttpBuilder::new().with_url(origin).with_retry(retry());
            if scheme == "http" {
                builder = builder.with_config(ClientConfigKey::AllowHttp, "true");
            }
            Arc::new(builder.build().map_err(|e| describe(e, url.as_str()))?)
        }
        other => return Err(invalid(format!("the scheme {other}:// is not supported"))),
    };
    clients
        .get_or_insert_with(HashMap::new)
        .insert(key, Arc::clone(&client));
    Ok((client, path))
}

/// An object_store error as an `io::Error` of the kind callers map to their own types (not
/// found, permission denied), its message naming `url`.
pub(crate) fn describe(e: object_store::Error, url: &str) -> io::Error {
    use object_store::Error as E;
    match e {
        E::NotFound { .. } => {
            let what = match s3_code(&e.to_string()).as_deref() {
                Some("NoSuchBucket") => "no such bucket",
                _ => "no such object",
            };
            io::Error::new(io::ErrorKind::NotFound, format!("{url}: {what}"))
        }
        E::Precondition { .. } => io::Error::other(format!(
            "{url}: the object changed while it was read (its ETag is not the one it had when \
             opened); open it again"
        )),
        E::PermissionDenied { .. } | E::Unauthenticated { .. } => {
            let hint = match url.starts_with("s3") {
                true => {
                    "; credentials come from AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and \
                     AWS_SESSION_TOKEN (or AWS_SKIP_SIGNATURE=true for a public bucket)"
                }
                false => "",
            };
            io::Error::new(
                io::ErrorKind::PermissionDenied,
                format!("{url}: access denied ({}){hint}", without_body(&e.to_string())),
            )
        }
        // A listing of a missing bucket comes back as a generic error naming the S3 code.
        e if e.to_string().contains("NoSuchBucket") => {
            io::Error::new(io::ErrorKind::NotFound, format!("{url}: no such bucket"))
        }
        e => {
            let text = without_body(&e.to_string());
            // With no credentials in the environment, the client asks the instance metadata
            // service: its failure says nothing of the real cause.
            let hint = match text.contains("169.254.169.254") {
                true => {
                    "; no AWS credentials were found (set AWS_ACCESS_KEY_ID and \
                     AWS_SECRET_ACCESS_KEY, or AWS_SKIP_SIGNATURE=true for a public bucket)"
                }
                false => "",
            };
            io::Error::other(format!("{url}: {text}{hint}"))
        }
    }
}

/// The `<Code>` of an S3 error document in `text`, if there is one.
fn s3_code(text: &str) -> Option<String> {
    let start = text.find("<Code>")? + "<Code>".len();
    let len = text[start..].find("</Code>")?;
    Some(text[start..start + len].to_string())
}

/// An error's text without the XML document a server sent with it (its code kept).
fn without_body(text: &str) -> String {
    match (text.find("<?xml"), s3_code(text)) {
        (Some(at), Some(code)) => format!("{}{code}", &text[..at]),
        (Some(at), None) => text[..at].trim_end_matches([' ', ':']).to_string(),
        _ => text.to_string(),
    }
}
