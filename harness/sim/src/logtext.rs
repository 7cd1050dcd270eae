//! Plausible container output for each behaviour: a model server that starts,
//! loads its model and serves; one that exits at start-up for a missing
//! setting; one killed while loading; one that never finishes loading.

use k8s_openapi::api::core::v1::Container;

use super::behavior::image_tag;

/// What the output mentions.
#[derive(Clone, Debug)]
pub struct AppInfo {
    pub image: String,
    pub version: String,
    pub model: String,
    pub port: i32,
    pub args: Vec<String>,
    /// The image looks like the modeldock controller, not a model server.
    pub controller: bool,
    /// The address probes come from.
    pub prober: String,
}

impl AppInfo {
    pub fn new(c: &Container, app_label: Option<&str>, prober: &str) -> Self {
        let image = c.image.clone().unwrap_or_default();
        let args: Vec<String> = c
            .command
            .iter()
            .flatten()
            .skip(1)
            .chain(c.args.iter().flatten())
            .cloned()
            .collect();
        let model = args
            .iter()
            .find_map(|a| a.strip_prefix("--model-name=").map(str::to_owned))
            .or_else(|| {
                c.env
                    .iter()
                    .flatten()
                    .find(|e| e.name == "MODEL_NAME")
                    .and_then(|e| e.value.clone())
            })
            .or_else(|| app_label.map(str::to_owned))
            .unwrap_or_else(|| c.name.clone());
        let port = c
            .ports
            .iter()
            .flatten()
            .map(|p| p.container_port)
            .next()
            .unwrap_or(8080);
        let version = image_tag(&image);
        let controller = image.contains("controller");
        AppInfo {
            version: version.trim_start_matches('v').to_owned(),
            image,
            model,
            port,
            args,
            controller,
            prober: prober.to_owned(),
        }
    }

    /// The first lines of every start.
    pub fn startup(&self) -> Vec<String> {
        if self.controller {
            return vec![
                format!(
                    "{{\"level\":\"info\",\"msg\":\"starting modeldock-controller\",\"version\":\"{}\"}}",
                    self.version
                ),
                "{\"level\":\"info\",\"msg\":\"metrics server listening\",\"addr\":\":8080\"}"
                    .to_owned(),
                "{\"level\":\"info\",\"msg\":\"health probes listening\",\"addr\":\":8081\"}"
                    .to_owned(),
                "{\"level\":\"info\",\"msg\":\"attempting to acquire leader lease modeldock-system/modeldock-controller...\"}"
                    .to_owned(),
            ];
        }
        let mut v = vec![
            format!(
                "INFO:     modeldock-server {} (image {})",
                self.version, self.image
            ),
            "INFO:     Started server process [1]".to_owned(),
        ];
        if !self.args.is_empty() {
            v.push(format!("INFO:     args: {}", self.args.join(" ")));
        }
        v.push(format!(
            "INFO:     loading model {m} from /models/{m}",
            m = self.model
        ));
        v
    }

    /// Loading completes and the server listens.
    pub fn ready(&self) -> Vec<String> {
        if self.controller {
            return vec![
                "{\"level\":\"info\",\"msg\":\"successfully acquired lease modeldock-system/modeldock-controller\"}".to_owned(),
                "{\"level\":\"info\",\"msg\":\"Starting Controller\",\"controller\":\"modelservice\"}".to_owned(),
                "{\"level\":\"info\",\"msg\":\"Starting workers\",\"controller\":\"modelservice\",\"worker count\":1}".to_owned(),
            ];
        }
        vec![
            "INFO:     loaded 8 of 8 weight shards (2.1 GiB) in 1.4s".to_owned(),
            "INFO:     warm-up: 8 batches done in 0.3s".to_owned(),
            "INFO:     Waiting for application startup.".to_owned(),
            "INFO:     Application startup complete.".to_owned(),
            format!(
                "INFO:     Uvicorn running on http://0.0.0.0:{} (Press CTRL+C to quit)",
                self.port
            ),
        ]
    }

    /// One readiness probe, answered.
    pub fn probe(&self, path: &str, code: u16, n: u64) -> String {
        let text = match code {
            200 => "OK",
            503 => "Service Unavailable",
            _ => "",
        };
        format!(
            "INFO:     {}:{} - \"GET {path} HTTP/1.1\" {code} {text}",
            self.prober,
            40000 + (n * 7919) % 20000
        )
    }

    /// A start-up that fails: the last lines before the process exits.
    pub fn crash(&self, exit_code: i32) -> Vec<String> {
        if exit_code == 0 {
            return vec![
                "INFO:     MODEL_PATH is empty: nothing to serve".to_owned(),
                "INFO:     Shutting down".to_owned(),
                "INFO:     Finished server process [1]".to_owned(),
            ];
        }
        vec![
            "ERROR:    configuration check failed".to_owned(),
            "FATAL: environment variable MODEL_PATH is not set".to_owned(),
        ]
    }

    /// Loading weights until the kernel kills the process (no last words).
    pub fn oom_loading(&self) -> Vec<String> {
        (1..=5)
            .map(|i| {
                format!(
                    "INFO:     loading shard {i}/8 (model-0000{i}-of-00008.safetensors, 1.9 GiB)"
                )
            })
            .collect()
    }

    /// Still loading while the probe fails.
    pub fn still_loading(&self, n: u64) -> String {
        format!(
            "WARNING:  model {} not loaded yet: waiting for /models/{}/config.json ({}s)",
            self.model,
            self.model,
            n * 5
        )
    }

    /// A graceful stop on SIGTERM.
    pub fn shutdown(&self) -> Vec<String> {
        if self.controller {
            return vec![
                "{\"level\":\"info\",\"msg\":\"Stopping and waiting for non leader election runnables\"}".to_owned(),
            ];
        }
        vec![
            "INFO:     Shutting down".to_owned(),
            "INFO:     Waiting for application shutdown.".to_owned(),
            "INFO:     Application shutdown complete.".to_owned(),
            "INFO:     Finished server process [1]".to_owned(),
        ]
    }
}
