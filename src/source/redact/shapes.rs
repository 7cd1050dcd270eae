//! The credential shapes redacted by default: the table of rules, the
//! marker that replaces a value, and applying the rules to one text.

use std::sync::LazyLock;

use base64::Engine as _;
use regex::{Captures, Regex, RegexSet};

/// How every marker starts; a text holding it was already redacted there.
pub(crate) const MARKER_PREFIX: &str = "<redacted:";

/// Whether `s` is a marker and nothing else (a file redacted before).
pub(crate) fn is_marker(s: &str) -> bool {
    s.strip_prefix(MARKER_PREFIX)
        .and_then(|rest| rest.strip_suffix('>'))
        .is_some_and(|rule| !rule.is_empty() && !rule.contains(['<', '>', ' ']))
}

/// The marker for `rule`: `<redacted:RULE>`.
pub(crate) fn marker(rule: &str) -> String {
    format!("{MARKER_PREFIX}{rule}>")
}

/// Parts of an environment variable name that mark a credential.
const CREDENTIAL_WORDS: &[&str] = &[
    "password",
    "passwd",
    "token",
    "secret",
    "key",
    "credential",
    "auth",
    "private",
];

pub(crate) fn looks_like_credential(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    CREDENTIAL_WORDS.iter().any(|w| lower.contains(w))
}

/// One default redactor: a credential shape. The group named `v` (or the
/// first of `vd`, `vs`, `ve`, `vb` that matched) is the value replaced;
/// the rest of the match (key, header, user) stays.
pub struct Rule {
    pub name: &'static str,
    pattern: &'static str,
    /// Whether a match is a credential, not a word that looks like one.
    accept: fn(&Captures) -> bool,
}

/// The default rules, most specific first, so that a bearer token that is
/// also a JWT is named by the header that carried it.
pub const RULES: &[Rule] = &[
    Rule {
        name: "private-key",
        // The body up to the END line, or to the end of a text cut short.
        pattern: r"-----BEGIN[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----(?P<v>(?s:.*?))(?:-----END[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|\z)",
        accept: any_value,
    },
    Rule {
        name: "bearer",
        pattern: r"(?i)(?-u:\b)bearer[ \t]+(?P<v>[A-Za-z0-9\-._~+/]+=*)",
        accept: token_like,
    },
    Rule {
        name: "basic",
        pattern: r"(?i)(?-u:\b)basic[ \t]+(?P<v>[A-Za-z0-9+/]{4,}={0,2})",
        accept: basic_credentials,
    },
    Rule {
        name: "authorization",
        // Another scheme (or none): `Authorization: Token abc`.
        pattern: r#"(?i)(?-u:\b)(?:proxy-)?authorization\\?["']?[ \t]*[:=][ \t]*\\?["']?(?:(?:token|apikey|key|sso-key|signature)[ \t]+)?(?P<v>[^\s"'\\,;]+)"#,
        accept: authorization_value,
    },
    Rule {
        name: "aws-presigned",
        // A presigned S3 URL's signature, and the key id and scope it names.
        pattern: r#"(?i)[?&](?:x-amz-signature|x-amz-credential|x-amz-security-token)=(?P<v>[^&\s"'<>#\\]+)"#,
        accept: any_value,
    },
    Rule {
        name: "gcs-signed",
        pattern: r#"(?i)[?&](?:x-goog-signature|x-goog-credential)=(?P<v>[^&\s"'<>#\\]+)"#,
        accept: any_value,
    },
    Rule {
        name: "azure-sas",
        // A shared access signature's `sig`, in a URL or a connection string.
        pattern: r#"(?i)[?&]sig=(?P<v>[^&\s"'<>#;\\]+)"#,
        accept: any_value,
    },
    Rule {
        name: "url-signature",
        // The `Signature=` of older signed URLs (S3 and GCS version 2).
        pattern: r#"[?&]Signature=(?P<v>[^&\s"'<>#\\]+)"#,
        accept: any_value,
    },
    Rule {
        name: "slack-webhook",
        pattern: r"(?i)hooks\.slack\.com/(?:services|workflows|triggers)/(?P<v>[A-Za-z0-9_/\-]{8,})",
        accept: any_value,
    },
    Rule {
        name: "discord-webhook",
        pattern: r"(?i)(?:discord|discordapp)\.com/api/(?:v[0-9]+/)?webhooks/(?P<v>[0-9]{5,}/[A-Za-z0-9_\-]{20,})",
        accept: any_value,
    },
    Rule {
        name: "url-password",
        // The password may hold `/`, `#`, `@` or `:` as people write
        // them unescaped: it ends at the first `@` that a host (and a
        // port) and the end of the authority follow.
        pattern: r#"(?i)(?-u:\b)[a-z][a-z0-9+.\-]*://[^\s:/?#@"'<>\\]*:(?P<v>[^\s?"'<>\\]+?)@(?:\[[0-9a-f:.]+\]|[a-z0-9_\-]+(?:\.[a-z0-9_\-]+)*\.?)(?::[0-9]{1,5})?(?:[/?#\s"'<>\\,;)\]|&]|$)"#,
        accept: url_password,
    },
    Rule {
        name: "mysql-dsn",
        // Go's MySQL driver: `user:password@tcp(host:3306)/db`.
        pattern: r#"(?-u:\b)[A-Za-z0-9_.\-]+:(?P<v>[^\s"'<>\\]+?)@(?:tcp6?|udp|unix)\("#,
        accept: any_value,
    },
    Rule {
        name: "mysql-password",
        // `mysql -pPASSWORD` (attached: `-p NAME` prompts, NAME is the database).
        pattern: r#"(?-u:\b)(?:mysql|mysqldump|mysqladmin|mysqlimport|mysqlcheck|mysqlpump|mysqlshow|mysqlslap|mysqlbinlog|mariadb|mariadb-dump|mariadb-admin)(?-u:\b)[^\n;|&]*?[ \t]-p(?:"(?P<vd>[^"\n]+)"|'(?P<vs>[^'\n]+)'|(?P<vb>[^\s"';|&<>\\]+))"#,
        accept: pair_value,
    },
    Rule {
        name: "login-password",
        // `-p VALUE` where the program reads a password there: a registry
        // login, sshpass, the mongo shell; redis-cli's is `-a VALUE`.
        pattern: r#"(?-u:\b)(?:(?:(?:docker|podman|buildah|skopeo|oras|nerdctl|crane|helm)[ \t]+(?:registry[ \t]+)?login|sshpass|mongosh|mongo)(?-u:\b)[^\n;|&]*?[ \t]-p|redis-cli(?-u:\b)[^\n;|&]*?[ \t]-a)[ \t]+(?:"(?P<vd>[^"\n]+)"|'(?P<vs>[^'\n]+)'|(?P<vb>[^\s"'\-;|&<>\\][^\s"';|&<>\\]*))"#,
        accept: pair_value,
    },
    Rule {
        name: "flag-value",
        // `--password VALUE`: a flag whose name ends in a credential word,
        // its value the next word (`--password=VALUE` is a `credential`).
        pattern: r#"(?i)(?:^|[^A-Za-z0-9_.\-])(?P<k>--?[A-Za-z0-9_.\-]*(?:password|passwd|passphrase|secret|token|credentials?|api[_.\-]?key|apikey|access[_.\-]?key|secret[_.\-]?key|private[_.\-]?key|signing[_.\-]?key))[ \t]+(?:"(?P<vd>[^"\n]*)"|'(?P<vs>[^'\n]*)'|(?P<vb>[^\s"'\-;|&<>\\][^\s"';|&<>\\]*))"#,
        accept: pair_value,
    },
    Rule {
        name: "docker-auth",
        // A registry's `"auth"` in a Docker config: base64 of `user:password`.
        pattern: r#"(?i)(?-u:\b)auth\\?["']?[ \t]*:[ \t]*\\?["']?(?P<v>[A-Za-z0-9+/]{4,}={0,2})"#,
        accept: basic_credentials,
    },
    Rule {
        name: "aws-access-key-id",
        pattern: r"(?-u:\b)(?P<v>(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16})(?-u:\b)",
        accept: any_value,
    },
    Rule {
        name: "github-token",
        pattern: r"(?-u:\b)(?P<v>gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{22,255})",
        accept: any_value,
    },
    Rule {
        name: "gitlab-token",
        pattern: r"(?-u:\b)(?P<v>gl(?:pat|dt|rt|ptt|cbt|soat)-[A-Za-z0-9_\-]{20,})",
        accept: any_value,
    },
    Rule {
        name: "slack-token",
        pattern: r"(?-u:\b)(?P<v>xox[abposr]-[A-Za-z0-9\-]{10,})",
        accept: any_value,
    },
    Rule {
        name: "huggingface-token",
        pattern: r"(?-u:\b)(?P<v>hf_[A-Za-z0-9]{30,})",
        accept: any_value,
    },
    Rule {
        name: "sk-key",
        // OpenAI-style and similar `sk-` API keys.
        pattern: r"(?-u:\b)(?P<v>sk-(?:proj-|svcacct-|admin-|ant-)?[A-Za-z0-9_\-]{20,})",
        // Random: a Kubernetes name such as `sk-learn-server-7d9f` is not.
        accept: random_like,
    },
    Rule {
        name: "stripe-key",
        // Secret and restricted keys; a publishable `pk_live_` is public.
        pattern: r"(?-u:\b)(?P<v>(?:sk|rk)_(?:live|test)_[0-9A-Za-z]{16,})",
        accept: any_value,
    },
    Rule {
        name: "npm-token",
        pattern: r"(?-u:\b)(?P<v>npm_[A-Za-z0-9]{36})(?-u:\b)",
        accept: any_value,
    },
    Rule {
        name: "sendgrid-key",
        pattern: r"(?-u:\b)(?P<v>SG\.[A-Za-z0-9_\-]{16,}\.[A-Za-z0-9_\-]{16,})",
        accept: any_value,
    },
    Rule {
        name: "google-api-key",
        pattern: r"(?-u:\b)(?P<v>AIza[0-9A-Za-z_\-]{35})",
        accept: any_value,
    },
    Rule {
        name: "jwt",
        pattern: r"(?-u:\b)(?P<v>eyJ[A-Za-z0-9_\-]{4,}\.eyJ[A-Za-z0-9_\-]{4,}\.[A-Za-z0-9_\-]*)",
        accept: any_value,
    },
    Rule {
        name: "credential",
        // `key=v`, `key: v`, `"key": "v"` (also with escaped quotes, as in
        // JSON inside a JSON string) where the key ends in a credential
        // word. `max_tokens=`, `secretName:` or `password policy` do not:
        // the word must end the key, and a separator must follow.
        pattern: r#"(?i)(?:^|[^A-Za-z0-9_.\-])(?P<k>[A-Za-z0-9_.\-]*(?:password|passwd|passphrase|secret|token|credentials?|api[_.\-]?key|apikey|access[_.\-]?key|account[_.\-]?key|secret[_.\-]?key|private[_.\-]?key|signing[_.\-]?key|encryption[_.\-]?key|master[_.\-]?key))\\?["']?[ \t]*[:=][ \t]*(?:\\"(?P<ve>[^"\\]*)\\"|"(?P<vd>(?:[^"\\\n]|\\.)*)"|'(?P<vs>[^'\n]*)'|(?P<vb>[^\s"'&,;<>\\]+))"#,
        accept: pair_value,
    },
];

struct Compiled {
    set: RegexSet,
    regexes: Vec<Regex>,
}

/// The rules, compiled once per process.
static COMPILED: LazyLock<Compiled> = LazyLock::new(|| {
    let patterns: Vec<&str> = RULES.iter().map(|r| r.pattern).collect();
    Compiled {
        // The patterns are constants, checked by the unit tests.
        set: RegexSet::new(&patterns).expect("the default redaction rules compile"),
        regexes: patterns
            .iter()
            .map(|p| Regex::new(p).expect("the default redaction rules compile"))
            .collect(),
    }
});

fn value<'h>(caps: &Captures<'h>) -> Option<regex::Match<'h>> {
    ["v", "vd", "vs", "ve", "vb"]
        .iter()
        .find_map(|name| caps.name(name))
}

fn any_value(caps: &Captures) -> bool {
    value(caps).is_some_and(|v| !v.as_str().is_empty() && !v.as_str().contains(MARKER_PREFIX))
}

/// A random key holds an upper-case letter and a digit; a Kubernetes name
/// (lower case) never does both.
fn random_like(caps: &Captures) -> bool {
    value(caps).is_some_and(|v| {
        let v = v.as_str();
        !v.contains(MARKER_PREFIX)
            && v.bytes().any(|b| b.is_ascii_uppercase())
            && v.bytes().any(|b| b.is_ascii_digit())
    })
}

/// A URL's password, unless what sits between `host:` and `@` is a port
/// and a path (`http://h:8080/users/@me`).
fn url_password(caps: &Captures) -> bool {
    value(caps).is_some_and(|v| {
        let v = v.as_str();
        let port_then_path = v.split_once('/').is_some_and(|(port, _)| {
            !port.is_empty() && port.len() <= 5 && port.bytes().all(|b| b.is_ascii_digit())
        });
        !v.contains(MARKER_PREFIX) && !port_then_path
    })
}

/// A bearer token, not a word: "Bearer authentication" stays.
fn token_like(caps: &Captures) -> bool {
    let Some(v) = value(caps).map(|v| v.as_str()) else {
        return false;
    };
    v.len() >= 8
        && (v.len() >= 24
            || v.bytes()
                .any(|b| b.is_ascii_digit() || b"-._~+/=".contains(&b)))
}

/// Basic credentials are base64 of `user:password`; "Basic auth" is not.
fn basic_credentials(caps: &Captures) -> bool {
    value(caps).is_some_and(|v| {
        base64::engine::general_purpose::STANDARD
            .decode(v.as_str())
            .is_ok_and(|bytes| bytes.contains(&b':'))
    })
}

/// A credential after `Authorization:`, not the next word of a sentence
/// (`may require authorization: server message: ...`): token-like, as a
/// bearer token is.
fn authorization_value(caps: &Captures) -> bool {
    value(caps).is_some_and(|v| {
        let v = v.as_str();
        !v.contains(MARKER_PREFIX)
            && !v.eq_ignore_ascii_case("bearer")
            && !v.eq_ignore_ascii_case("basic")
    }) && token_like(caps)
}

/// The value of a `password=`-like pair, unless it is plainly not a
/// credential: empty, a reference (`$(VAR)`, `${VAR}`, `{{ .x }}`), a
/// structure that opens there, a mask, a flag word, or a number after a
/// `token` key (`first_token=0.12`).
fn pair_value(caps: &Captures) -> bool {
    let Some(v) = value(caps).map(|v| v.as_str().trim()) else {
        return false;
    };
    let key = caps
        .name("k")
        .map(|k| k.as_str().to_ascii_lowercase())
        .unwrap_or_default();
    let word = matches!(
        v.to_ascii_lowercase().as_str(),
        "true" | "false" | "null" | "nil" | "none" | "yes" | "no" | "required" | "optional"
    );
    let number = v
        .trim_end_matches(|c: char| c.is_ascii_alphabetic() || c == '%')
        .parse::<f64>()
        .is_ok();
    !(v.is_empty()
        || v.contains(MARKER_PREFIX)
        || v.starts_with('$')
        || v.starts_with("{{")
        || v.starts_with(['{', '[', '('])
        || v.bytes().all(|b| b == b'*' || b == b'x' || b == b'X')
        || word
        || (number && key.ends_with("token")))
}

/// Applies the default rules to `text`; returns each rule that replaced
/// something, with its count.
pub fn redact_shapes(text: &mut String) -> Vec<(&'static str, u32)> {
    let compiled = &*COMPILED;
    let mut found = Vec::new();
    let matched = compiled.set.matches(text);
    if !matched.matched_any() {
        return found;
    }
    for index in matched.iter() {
        let rule = &RULES[index];
        let mut count = 0;
        let replaced = compiled.regexes[index].replace_all(text, |caps: &Captures| {
            let whole = caps.get(0).map(|m| m.as_str()).unwrap_or_default();
            match value(caps) {
                Some(v) if (rule.accept)(caps) => {
                    count += 1;
                    let start = caps.get(0).map(|m| m.start()).unwrap_or_default();
                    format!(
                        "{}{}{}",
                        &whole[..v.start() - start],
                        marker(rule.name),
                        &whole[v.end() - start..]
                    )
                }
                _ => whole.to_string(),
            }
        });
        if count > 0 {
            *text = replaced.into_owned();
            found.push((rule.name, count));
        }
    }
    found
}

/// Where the default rules would replace in `text`, without replacing:
/// each value's byte range, the whole match's, and the rule. Overlaps go
/// to the rule listed first (the most specific).
pub(crate) fn value_spans(text: &str) -> Vec<Span> {
    let compiled = &*COMPILED;
    let mut spans: Vec<Span> = Vec::new();
    for index in compiled.set.matches(text).iter() {
        let rule = &RULES[index];
        for caps in compiled.regexes[index].captures_iter(text) {
            let (Some(whole), Some(v)) = (caps.get(0), value(&caps)) else {
                continue;
            };
            if !(rule.accept)(&caps) {
                continue;
            }
            let overlaps = spans
                .iter()
                .any(|s| s.value.start < v.end() && v.start() < s.value.end);
            if !overlaps {
                spans.push(Span {
                    value: v.range(),
                    whole: whole.range(),
                    rule: rule.name,
                });
            }
        }
    }
    spans.sort_by_key(|s| s.value.start);
    spans
}

/// One value a rule would replace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Span {
    pub value: std::ops::Range<usize>,
    pub whole: std::ops::Range<usize>,
    pub rule: &'static str,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shapes(text: &str) -> (String, Vec<(&'static str, u32)>) {
        let mut text = text.to_string();
        let found = redact_shapes(&mut text);
        (text, found)
    }

    #[derive(serde::Deserialize)]
    struct Corpus {
        secrets: Vec<Case>,
        ordinary: Vec<String>,
    }

    #[derive(serde::Deserialize)]
    struct Case {
        rule: String,
        text: String,
        secret: String,
        want: String,
    }

    fn corpus() -> Corpus {
        serde_saphyr::from_str(include_str!("../../../fixtures/redaction/corpus.yaml")).unwrap()
    }

    #[test]
    fn every_shape_of_the_corpus_is_replaced_by_its_rule() {
        let corpus = corpus();
        assert!(corpus.secrets.len() >= 20);
        for case in &corpus.secrets {
            assert!(case.text.contains(&case.secret), "{}", case.text);
            let (out, found) = shapes(&case.text);
            assert_eq!(out, case.want, "{}", case.text);
            assert!(!out.contains(&case.secret));
            assert!(
                found.iter().any(|(rule, _)| *rule == case.rule),
                "{} found {found:?}",
                case.text
            );
        }
        // Every rule has a case.
        for rule in RULES {
            assert!(
                corpus.secrets.iter().any(|c| c.rule == rule.name),
                "no corpus case for {}",
                rule.name
            );
        }
    }

    #[test]
    fn the_ordinary_lines_of_the_corpus_stay() {
        for line in corpus().ordinary {
            assert_eq!(shapes(&line), (line.clone(), vec![]), "{line}");
        }
    }

    #[test]
    fn every_rule_compiles_and_has_a_distinct_name() {
        assert_eq!(COMPILED.regexes.len(), RULES.len());
        let mut names: Vec<_> = RULES.iter().map(|r| r.name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), RULES.len());
    }

    #[test]
    fn a_jwt_goes_whole() {
        let jwt = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiJtZGlhZy10ZXN0In0.c2lnbmF0dXJlLW5vdC1yZWFs";
        let (out, found) = shapes(&format!("token for the job: {jwt} ok"));
        assert_eq!(out, "token for the job: <redacted:jwt> ok");
        assert_eq!(found, vec![("jwt", 1)]);
    }

    #[test]
    fn bearer_and_basic_keep_the_header_and_scheme() {
        let (out, _) = shapes("Authorization: Bearer abc123DEF456ghi789.jkl");
        assert_eq!(out, "Authorization: Bearer <redacted:bearer>");
        // dXNlcjpwYXNz is base64 of user:pass.
        let (out, _) = shapes("curl -H 'Authorization: Basic dXNlcjpwYXNz' http://svc");
        assert_eq!(
            out,
            "curl -H 'Authorization: Basic <redacted:basic>' http://svc"
        );
        let (out, _) = shapes("authorization: Token 9f8e7d6c5b4a");
        assert_eq!(out, "authorization: Token <redacted:authorization>");
        for prose in [
            "pull access denied, repository does not exist or may require authorization: server message: insufficient_scope",
            "authorization: required",
            "Bearer authentication is required",
            "Basic auth is disabled",
            "WWW-Authenticate: Bearer realm=\"api\"",
        ] {
            assert_eq!(shapes(prose), (prose.to_string(), vec![]), "{prose}");
        }
    }

    #[test]
    fn a_url_keeps_its_user_and_host_and_loses_its_password() {
        let (out, found) = shapes("DATABASE_URL=postgres://app:s3cr3t-pw@db.lab.svc:5432/app");
        assert_eq!(
            out,
            "DATABASE_URL=postgres://app:<redacted:url-password>@db.lab.svc:5432/app"
        );
        assert_eq!(found, vec![("url-password", 1)]);
        let plain = "GET http://model.lab.svc:8080/v1/models?x=1@2 took 3ms";
        assert_eq!(shapes(plain).0, plain);
    }

    #[test]
    fn a_private_key_block_keeps_its_armour_lines() {
        let pem = "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAzFakeFakeFake\nmoreFakeBase64==\n-----END RSA PRIVATE KEY-----\n";
        let (out, _) = shapes(&format!("loaded key\n{pem}done"));
        assert_eq!(
            out,
            "loaded key\n-----BEGIN RSA PRIVATE KEY-----<redacted:private-key>-----END RSA PRIVATE KEY-----\ndone"
        );
        // A log cut short inside the block loses the rest of it.
        let (out, _) = shapes("-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAA");
        assert_eq!(
            out,
            "-----BEGIN OPENSSH PRIVATE KEY-----<redacted:private-key>"
        );
        // A public certificate is not a secret.
        let cert = "-----BEGIN CERTIFICATE-----\nMIIBfake\n-----END CERTIFICATE-----";
        assert_eq!(shapes(cert).0, cert);
    }

    #[test]
    fn cloud_and_forge_tokens_go() {
        for (text, rule) in [
            ("key id AKIAZQ4MDIAGFAKE7X2P in use", "aws-access-key-id"),
            ("sts ASIAQW3MDIAGTEMP9K1L", "aws-access-key-id"),
            ("ghp_Zq8fakeFAKEfake0123456789abcdefABCDEF", "github-token"),
            ("glpat-xY9fakeFAKEfake01234", "gitlab-token"),
            ("xoxb-1234567890-fakefakefake", "slack-token"),
            ("hf_FakeFakeFakeFakeFakeFakeFakeFake12", "huggingface-token"),
            ("sk-proj-FakeFakeFakeFake0123456789", "sk-key"),
            ("AIzaSyFake-Fake_Fake0123456789abcdefghi", "google-api-key"),
        ] {
            let (out, found) = shapes(text);
            assert_eq!(found.first().map(|f| f.0), Some(rule), "{text} -> {out}");
            assert!(out.contains(&marker(rule)), "{out}");
        }
    }

    #[test]
    fn pairs_keep_their_key_in_every_syntax() {
        for (text, want) in [
            ("password=hunter2", "password=<redacted:credential>"),
            ("DB_PASSWORD: hunter2", "DB_PASSWORD: <redacted:credential>"),
            (
                r#"{"password": "hun ter\"2", "user": "bob"}"#,
                r#"{"password": "<redacted:credential>", "user": "bob"}"#,
            ),
            (
                r#"msg="{\"api_key\":\"k-123\"}""#,
                r#"msg="{\"api_key\":\"<redacted:credential>\"}""#,
            ),
            (
                "GET /cb?code=1&access_token=tok123&state=x",
                "GET /cb?code=1&access_token=<redacted:credential>&state=x",
            ),
            (
                "aws_secret_access_key = wJalrFakeFakeFake/K7MDENG",
                "aws_secret_access_key = <redacted:credential>",
            ),
            (
                "DefaultEndpointsProtocol=https;AccountName=lab;AccountKey=ZmFrZWtleQ==;EndpointSuffix=core.windows.net",
                "DefaultEndpointsProtocol=https;AccountName=lab;AccountKey=<redacted:credential>;EndpointSuffix=core.windows.net",
            ),
            ("--hf-token='abc def'", "--hf-token='<redacted:credential>'"),
            ("X-API-Key: k3y", "X-API-Key: <redacted:credential>"),
        ] {
            assert_eq!(shapes(text).0, want, "{text}");
        }
    }

    #[test]
    fn pairs_that_are_not_credentials_stay() {
        for text in [
            "password policy updated",
            "token bucket refilled: 40 tokens",
            "max_tokens=512 prompt_tokens: 20",
            "time_to_first_token=0.12s",
            "secretName: db-creds",
            "tokenizer: /models/llama/tokenizer.json",
            "password: $(DB_PASSWORD)",
            "password: ${DB_PASSWORD}",
            "secret: true",
            "password: ********",
            "credentials: {user: a}",
            "image: registry.example.com/ml/server:1.4.2",
        ] {
            assert_eq!(shapes(text), (text.to_string(), vec![]), "{text}");
        }
    }

    /// Each shape added for issue 26's list, beside the text nearest to it
    /// that must stay (the corpus holds more of both).
    #[test]
    fn each_shape_goes_and_its_near_miss_stays() {
        for (rule, positive, near_miss) in [
            (
                "aws-presigned",
                "GET /w.bin?X-Amz-Credential=AKIAZQ4MDIAGFAKE7X2P%2F20261201&X-Amz-Signature=0ddba11cafe",
                "GET /w.bin?X-Amz-SignedHeaders=host&X-Amz-Date=20261201T090000Z",
            ),
            (
                "gcs-signed",
                "GET /o?X-Goog-Signature=fa15e5167a7e",
                "X-Goog-Algorithm=GOOG4-RSA-SHA256 signature checked",
            ),
            (
                "azure-sas",
                "https://a.blob.core.windows.net/c/b?sv=2024&sig=Fa%2Bke",
                "GET /c?signal=9",
            ),
            (
                "url-signature",
                "/b?Expires=1&Signature=ZmFrZQ%3D%3D",
                "/b?SignatureVersion=2",
            ),
            (
                "slack-webhook",
                "https://hooks.slack.com/services/T0FAKE/B0FAKE/fakefakefake",
                "https://hooks.slack.com/services",
            ),
            (
                "discord-webhook",
                "https://discord.com/api/webhooks/1234567890/FakeDiscordWebhookToken01",
                "https://discord.com/api/webhooks",
            ),
            (
                "url-password",
                "redis://default:p@ss/w#rd@cache.lab.svc:6379/0",
                "https://registry.example.com:5000/v2/ml/server@sha256:0123abcd4567ef89",
            ),
            (
                "mysql-dsn",
                "app:p@ss/w#rd@tcp(mysql:3306)/models",
                "app@tcp(mysql:3306)/models",
            ),
            (
                "mysql-password",
                "mysql -u root -pS3cretFake db",
                "mysql -u root -p db",
            ),
            (
                "login-password",
                "sshpass -p FakeSshPass ssh lab",
                "docker run -p 8080:80 web",
            ),
            (
                "flag-value",
                "server --hf-token FakeFlagToken1",
                "server --max-tokens 512 --token-limit 4096",
            ),
            (
                "docker-auth",
                r#"{"auth":"cm9ib3Q6cGFzcw=="}"#,
                r#"{"auth": "enabled"}"#,
            ),
            (
                "stripe-key",
                "sk_live_FakeStripeKey0123456789",
                "pk_live_FakeStripeKey0123456789",
            ),
            (
                "npm-token",
                "npm_FakeNpmToken0123456789abcdefABCDEF01",
                "npm_config_cache=/tmp",
            ),
            (
                "sendgrid-key",
                "SG.FakeSendGridKey01.FakeSendGridSecret0123456789",
                "SG.example.com",
            ),
            (
                "sk-key",
                "sk-proj-FakeFakeFakeFake0123456789",
                "sk-learn-inference-server-7d9f4c-xk2lp",
            ),
        ] {
            let (out, found) = shapes(positive);
            assert!(
                found.iter().any(|f| f.0 == rule),
                "{positive} -> {out} {found:?}"
            );
            assert!(out.contains(&marker(rule)), "{out}");
            assert_eq!(
                shapes(near_miss),
                (near_miss.to_string(), vec![]),
                "{near_miss}"
            );
        }
    }

    #[test]
    fn spans_name_each_value_once_by_the_most_specific_rule() {
        let text = "--password hunter2 Authorization: Bearer abc123DEF456ghi789.jkl";
        let spans = value_spans(text);
        let got: Vec<(&str, &str)> = spans
            .iter()
            .map(|s| (&text[s.value.clone()], s.rule))
            .collect();
        assert_eq!(
            got,
            vec![
                ("hunter2", "flag-value"),
                ("abc123DEF456ghi789.jkl", "bearer")
            ]
        );
    }

    #[test]
    fn redacting_twice_changes_nothing_more() {
        let text = "Authorization: Bearer abc123DEF456ghi789 password=x token=eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4In0.sig";
        let (once, _) = shapes(text);
        let (twice, found) = shapes(&once);
        assert_eq!(once, twice);
        assert!(found.is_empty(), "{found:?}");
    }
}
