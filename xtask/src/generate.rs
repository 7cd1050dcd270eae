//! Files generated from the one clap definition and the catalogue:
//! shell completions, man pages, and docs/symptoms.md. `--check` compares
//! instead of writing, for CI; a unit test does the same.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use clap::builder::{PossibleValue, PossibleValuesParser};
use clap::{Args, CommandFactory};
use clap_complete::Shell;
use mdiag::cli::Cli;
use mdiag::exit::{Exit, exit_codes_help};
use mdiag_core::catalogue::{Lang, catalogue};

#[derive(Args)]
pub struct GenerateArgs {
    /// Compare instead of writing; fail when a generated file is stale.
    #[arg(long)]
    pub check: bool,
}

pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("xtask lives one level below the repository root")
        .to_path_buf()
}

pub fn run(args: GenerateArgs) -> anyhow::Result<()> {
    let root = repo_root();
    let mut stale = Vec::new();
    for (path, bytes) in generated_files()? {
        let full = root.join(&path);
        let current = std::fs::read(&full).ok();
        if current.as_deref() == Some(bytes.as_slice()) {
            continue;
        }
        if args.check {
            stale.push(path.display().to_string());
        } else {
            if let Some(dir) = full.parent() {
                std::fs::create_dir_all(dir)?;
            }
            std::fs::write(&full, &bytes).with_context(|| format!("writing {}", full.display()))?;
            println!("wrote {}", path.display());
        }
    }
    if !stale.is_empty() {
        bail!(
            "generated files are stale: {}; run `cargo xtask generate`",
            stale.join(", ")
        );
    }
    Ok(())
}

/// Every generated file, as (path relative to the repo root, contents).
pub fn generated_files() -> anyhow::Result<Vec<(PathBuf, Vec<u8>)>> {
    let mut out = Vec::new();
    for (shell, name) in [
        (Shell::Bash, "mdiag.bash"),
        (Shell::Zsh, "_mdiag"),
        (Shell::Fish, "mdiag.fish"),
    ] {
        let mut bytes = Vec::new();
        clap_complete::generate(shell, &mut completion_command(), "mdiag", &mut bytes);
        if shell == Shell::Fish {
            bytes.extend(fish_explain_ids().into_bytes());
        }
        out.push((PathBuf::from("completions").join(name), bytes));
    }
    let mut command = Cli::command();
    // Building propagates the global flags into each subcommand's page.
    command.build();
    out.push((
        PathBuf::from("docs/man/mdiag.1"),
        man_page(command.clone(), "mdiag")?,
    ));
    for sub in command.get_subcommands().filter(|s| s.get_name() != "help") {
        let name = format!("mdiag-{}", sub.get_name());
        let page = man_page(sub.clone().name(name.clone()), sub.get_name())?;
        out.push((PathBuf::from(format!("docs/man/{name}.1")), page));
    }
    out.push((
        PathBuf::from("docs/symptoms.md"),
        symptoms_markdown().into_bytes(),
    ));
    Ok(out)
}

/// A man page: what clap_mangen makes of the command (NAME, SYNOPSIS,
/// DESCRIPTION, OPTIONS, SUBCOMMANDS, VERSION), with EXAMPLES, EXIT STATUS
/// and ENVIRONMENT before VERSION. clap_mangen has no call for a section of
/// one's own, so they are written with `roff` (the crate clap_mangen writes
/// with) and put in place. The exit codes of `--help` (its after-help
/// text) become EXIT STATUS instead of clap_mangen's EXTRA section.
fn man_page(command: clap::Command, page: &str) -> anyhow::Result<Vec<u8>> {
    use roff::{Roff, bold, roman};
    let after = command.get_after_help().map(|h| h.to_string());
    if after.as_deref().is_some_and(|h| h != exit_codes_help()) {
        bail!("{page}: an after-help text other than the exit codes would be lost");
    }
    let mut generated = Vec::new();
    clap_mangen::Man::new(command.after_help(None::<&str>)).render(&mut generated)?;
    let generated = String::from_utf8(generated)?;

    let mut roff = Roff::new();
    roff.control("SH", ["EXAMPLES"]);
    for (command, what) in examples(page) {
        roff.control("TP", [])
            .text([bold(command)])
            .text([roman(what)]);
    }
    roff.control("SH", ["EXIT STATUS"]);
    for (code, meaning) in exit_codes()? {
        roff.control("TP", [])
            .text([bold(code.to_string())])
            .text([roman(meaning)]);
    }
    roff.control("SH", ["ENVIRONMENT"]);
    for (names, what) in environment(page) {
        let mut tag = Vec::new();
        for (i, name) in names.iter().enumerate() {
            if i > 0 {
                tag.push(roman(", "));
            }
            tag.push(bold(*name));
        }
        roff.control("TP", []).text(tag).text([roman(what)]);
    }
    let sections = roff.render();
    // `render` starts with the apostrophe string the page already defines.
    let sections = sections
        .strip_prefix(".ie \\n(.g .ds Aq \\(aq\n.el .ds Aq '\n")
        .context("roff's preamble changed; update man_page")?;
    let at = generated
        .find("\n.SH VERSION\n")
        .map_or(generated.len(), |i| i + 1);
    let mut page = generated.clone();
    page.insert_str(at, sections);
    Ok(page.into_bytes())
}

/// The codes `--help` lists, as (code, meaning).
fn exit_codes() -> anyhow::Result<Vec<(u8, String)>> {
    Ok(Exit::ALL
        .iter()
        .map(|e| (e.code(), e.meaning().to_string()))
        .collect())
}

/// EXAMPLES of each page: (command line, what it does).
fn examples(page: &str) -> Vec<(&'static str, &'static str)> {
    match page {
        "mdiag" => vec![
            (
                "mdiag triage -A",
                "Rank every workload of every namespace by how broken it is, worst first; healthy ones are folded into a count.",
            ),
            (
                "mdiag trace chart-demo -n modeldock-lab",
                "Why the ModelService chart-demo is not serving: the object chain, each Pod's moments, where the rollout stopped, the lead finding and the command to run next.",
            ),
            (
                "mdiag gate chart-demo -n modeldock-lab --timeout 10m --junit gate.xml",
                "After helm upgrade in CI: wait until the rollout serves (exit 0), fails on a symptom that waiting does not cure (1), or times out (3).",
            ),
            (
                "mdiag snapshot chart-demo -n modeldock-lab --output-file evidence.yaml.gz",
                "Capture the objects, events and logs behind chart-demo into one file, before anyone rolls back.",
            ),
            (
                "mdiag trace chart-demo --snapshot evidence.yaml.gz",
                "Judge that file later, anywhere, without a cluster.",
            ),
            (
                "mdiag explain crashloop",
                "The documented cause, check, fix and verification of a symptom.",
            ),
        ],
        "trace" => vec![
            (
                "mdiag trace chart-demo -n modeldock-lab",
                "The default view of a ModelService: headline, tree, timeline and the lead finding with its evidence, first check and fix.",
            ),
            (
                "mdiag trace deploy/web -n shop -v",
                "A plain Deployment, every finding in full and each Pod's moments.",
            ),
            (
                "mdiag trace chart-demo -n modeldock-lab --logs",
                "Also read the logs of the Pods the findings are about, so a crash's own last words are shown under its finding.",
            ),
            (
                "mdiag trace chart-demo --snapshot evidence.yaml.gz --at 2026-11-28T10:05:00Z",
                "Judge a snapshot file as it stood at an earlier time.",
            ),
            (
                "kubectl get deploy,rs,pods,svc,endpointslices,events -n shop -o yaml | mdiag trace deploy/web --snapshot -",
                "Judge kubectl output read from standard input.",
            ),
            (
                "mdiag trace chart-demo -n modeldock-lab -o json",
                "The versioned JSON report (schema mdiag/v1): verdict.state, verdict.serving, verdict.next, findings and gaps.",
            ),
        ],
        "triage" => vec![
            (
                "mdiag triage -n modeldock-lab",
                "One line per workload of a namespace, worst first, and the trace to run next.",
            ),
            (
                "mdiag triage -A -l app.kubernetes.io/managed-by=Helm --all",
                "Every namespace, only workloads with that label, healthy ones listed too.",
            ),
            (
                "mdiag triage -A --width 120",
                "Lay the table out for 120 columns.",
            ),
            (
                "mdiag triage --alert payload.json",
                "Trace what an Alertmanager webhook payload is about, with the alerts beside the timeline.",
            ),
            (
                "mdiag triage -A -o json",
                "Every workload as trace -o json reports it, and what fails outside any workload.",
            ),
        ],
        "gate" => vec![
            (
                "mdiag gate chart-demo -n modeldock-lab --timeout 10m --helm-release chart-demo --report gate.json --junit gate.xml --evidence evidence.yaml.gz",
                "Run after helm upgrade in a CI job: wait for the rollout, write the JSON report and JUnit XML, and capture a snapshot if it fails or times out.",
            ),
            (
                "mdiag gate deploy/web -n shop --timeout 5m --fail-on none",
                "Wait for the timeout whatever the findings say.",
            ),
            (
                "mdiag gate chart-demo -n modeldock-lab --fail-on crash-loop,oom-killed --max-restarts 5",
                "Fail at once only on these findings, and on a crash loop only after 5 restarts.",
            ),
        ],
        "snapshot" => vec![
            (
                "mdiag snapshot chart-demo -n modeldock-lab --output-file chart-demo.yaml.gz",
                "The chain of one ModelService with its events and logs, gzip-compressed.",
            ),
            (
                "mdiag snapshot -n shop --output-file shop.yaml --redact 'sk-[A-Za-z0-9]+'",
                "A whole namespace, with text matching the pattern also replaced.",
            ),
            (
                "mdiag snapshot deploy/web -n shop --output-file - -o json",
                "The chain of a Deployment as JSON on stdout, for a pipe.",
            ),
            (
                "mdiag triage -A -f shop.yaml",
                "Read it back with any command (-f is --snapshot).",
            ),
        ],
        "explain" => vec![
            ("mdiag explain", "Every finding id with its title."),
            (
                "mdiag explain crash-loop",
                "The cause, how to tell, the checks, the fix and how to verify it.",
            ),
            (
                "mdiag explain OOM",
                "A word for a symptom, a reason (CrashLoopBackOff, ErrImagePull, Evicted) or an exit code (137) finds the ids it may be.",
            ),
            (
                "mdiag explain crash-loop pod/chart-demo-ntmp458kfb-pvgk2 -n modeldock-lab",
                "The check commands with the real names of that Pod, read live.",
            ),
            (
                "mdiag explain image-pull-denied chart-demo --snapshot evidence.yaml.gz",
                "The same, read from a snapshot file.",
            ),
            (
                "mdiag explain crash-loop -o json",
                "The entry as data (schema mdiag/v1), as the MCP explain tool returns it.",
            ),
        ],
        "mcp" => vec![
            (
                "mdiag mcp",
                "Serve the tools trace, triage, explain and snapshot_summary on stdin and stdout; an agent starts it as the command mdiag with the argument mcp (docs/mcp.md).",
            ),
            (
                "mdiag mcp --kubeconfig ~/.kube/view-only --context staging -n shop",
                "Every tool reads the staging context's shop namespace with that kubeconfig, unless its own arguments name others.",
            ),
            (
                "mdiag mcp --lang zh",
                "Titles, causes, fixes and headlines in Chinese.",
            ),
        ],
        other => panic!("no examples for the {other} page"),
    }
}

/// The variables mdiag reads (none else): (names, what they do), for `page`.
fn environment(page: &str) -> Vec<(&'static [&'static str], &'static str)> {
    let mut vars: Vec<(&'static [&'static str], &'static str)> = vec![
        (
            &["KUBECONFIG"],
            "The kubeconfig files to read when --kubeconfig is not given, separated by colons and merged as kubectl merges them; unset, ~/.kube/config.",
        ),
        (
            &["KUBERNETES_SERVICE_HOST", "KUBERNETES_SERVICE_PORT"],
            "With no kubeconfig at all, inside a Pod: the API server, reached with the Pod's service account.",
        ),
        (
            &["LC_ALL", "LC_MESSAGES", "LANG"],
            "The language when --lang is not given: the first one set and not empty; a value starting with zh is Chinese, anything else English.",
        ),
        (
            &["NO_COLOR"],
            "Set and not empty: no colour under --color auto.",
        ),
        (&["TERM"], "dumb: no colour under --color auto."),
        (
            &["COLUMNS"],
            "The width of the human views and of --help when stdout is not a terminal and --width is not given; unset, 80.",
        ),
    ];
    if matches!(page, "mdiag" | "triage") {
        vars.push((
            &[mdiag::cmd::triage::TIMINGS_ENV],
            "Set: triage also prints how long loading and analysis took on stderr, for benchmarks.",
        ));
    }
    vars
}

/// The command line as the shells complete it: the one definition, with
/// the finding ids (and their titles) offered for `explain`'s argument. The
/// binary itself takes any word there (a symptom, an alias, an exit code).
fn completion_command() -> clap::Command {
    let ids = catalogue()
        .entries
        .iter()
        .map(|e| PossibleValue::new(e.id.as_str()).help(e.title.get(Lang::En)));
    Cli::command().mut_subcommand("explain", |explain| {
        explain.mut_arg("symptom", |arg| {
            arg.value_parser(PossibleValuesParser::new(ids))
        })
    })
}

/// clap_complete's fish script completes the values of flags, not of
/// positional arguments: the finding ids for `explain`'s first argument,
/// each with its title, offered until one is on the line.
fn fish_explain_ids() -> String {
    let ids: Vec<&str> = catalogue().entries.iter().map(|e| e.id.as_str()).collect();
    let mut out = format!(
        "\nfunction __fish_mdiag_explain_needs_id\n    __fish_mdiag_using_subcommand explain\n    and not __fish_seen_subcommand_from {}\nend\n\n",
        ids.join(" ")
    );
    // Single-quoted in fish: only ' and \ are special.
    let quote = |t: &str| format!("'{}'", t.replace('\\', "\\\\").replace('\'', "\\'"));
    for e in &catalogue().entries {
        let _ = writeln!(
            out,
            "complete -c mdiag -n \"__fish_mdiag_explain_needs_id\" -f -a {} -d {}",
            quote(&e.id),
            quote(e.title.get(Lang::En))
        );
    }
    out
}

/// The catalogue as one Markdown page, English then Chinese per entry.
pub fn symptoms_markdown() -> String {
    let cat = catalogue();
    let mut md = String::from(
        "# Symptom catalogue\n\n\
         Generated by `cargo xtask generate` from `src/core/catalogue/catalogue.yaml`; do not edit by hand.\n\
         `mdiag explain ID` prints the same text in the terminal (`--lang zh` for Chinese).\n\
         In the check commands a name to fill in is written `<pod>`, `<namespace>`: braces are \
         jsonpath's. `mdiag explain ID TARGET` fills them in with the target's real names.\n\n\
         | id | severity | title |\n|---|---|---|\n",
    );
    for e in &cat.entries {
        let _ = writeln!(
            md,
            "| [`{}`](#{}) | {} | {} |",
            e.id,
            e.id,
            e.severity.as_str(),
            e.title.get(Lang::En)
        );
    }
    for e in &cat.entries {
        let _ = writeln!(md, "\n## {}\n", e.id);
        let _ = writeln!(
            md,
            "**{}** · severity `{}`",
            e.title.get(Lang::En),
            e.severity.as_str()
        );
        if !e.symptoms.is_empty() {
            let words: Vec<String> = e.symptoms.iter().map(|s| format!("`{s}`")).collect();
            let _ = writeln!(md, "\nSymptoms: {}", words.join(", "));
        }
        for (label, text) in [("Cause", &e.cause), ("How to tell", &e.judge)] {
            let _ = writeln!(md, "\n**{label}.** {}", text.get(Lang::En));
        }
        md.push_str("\n**Check.**\n\n```sh\n");
        for c in &e.check {
            md.push_str(&mdiag_core::catalogue::template_shown(c).shell());
            md.push('\n');
        }
        md.push_str("```\n");
        for (label, text) in [("Fix", &e.fix), ("Verify", &e.verify)] {
            let _ = writeln!(md, "\n**{label}.** {}", text.get(Lang::En));
        }
        let _ = writeln!(md, "\n<details><summary>中文</summary>\n");
        let _ = writeln!(md, "**{}**\n", e.title.get(Lang::Zh));
        for (label, text) in [
            ("原因", &e.cause),
            ("判断", &e.judge),
            ("修复", &e.fix),
            ("验证", &e.verify),
        ] {
            let _ = writeln!(md, "**{label}：** {}\n", text.get(Lang::Zh));
        }
        md.push_str("</details>\n");
    }
    md
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[test]
    fn completions_offer_every_finding_id_for_explain() {
        let files = generated_files().unwrap();
        for name in ["mdiag.bash", "_mdiag", "mdiag.fish"] {
            let path = PathBuf::from("completions").join(name);
            let (_, bytes) = files.iter().find(|(p, _)| *p == path).unwrap();
            let text = String::from_utf8_lossy(bytes);
            for e in &catalogue().entries {
                assert!(text.contains(&e.id), "{name} lacks {}", e.id);
            }
        }
    }

    #[test]
    fn fish_completes_explain_ids_with_their_titles() {
        let files = generated_files().unwrap();
        let (_, bytes) = files
            .iter()
            .find(|(p, _)| p.as_path() == std::path::Path::new("completions/mdiag.fish"))
            .unwrap();
        let text = String::from_utf8_lossy(bytes);
        for e in &catalogue().entries {
            let line = format!(
                "complete -c mdiag -n \"__fish_mdiag_explain_needs_id\" -f -a '{}' -d '",
                e.id
            );
            assert!(text.contains(&line), "{line}");
        }
        // A title with an apostrophe stays inside its quotes.
        assert!(text.contains("workload\\'s Pods'"), "{text}");
    }

    #[test]
    fn man_pages_have_examples_exit_status_and_environment() {
        for (path, bytes) in generated_files().unwrap() {
            if !path.starts_with("docs/man") {
                continue;
            }
            let page = String::from_utf8(bytes).unwrap();
            let at = |heading: &str| {
                page.find(&format!("\n.SH {heading}\n"))
                    .unwrap_or_else(|| panic!("{}: no {heading}", path.display()))
            };
            let order = [
                at("OPTIONS"),
                at("EXAMPLES"),
                at("\"EXIT STATUS\""),
                at("ENVIRONMENT"),
                at("VERSION"),
            ];
            assert!(order.is_sorted(), "{}: {order:?}", path.display());
            assert!(!page.contains(".SH EXTRA"), "{}", path.display());
            // One definition of the apostrophe string, at the top.
            assert_eq!(page.matches(".ds Aq").count(), 2, "{}", path.display());
            assert!(page.contains("\\fBKUBECONFIG\\fR"), "{}", path.display());
        }
    }

    #[test]
    fn exit_status_lists_the_codes_of_the_exit_type() {
        use mdiag::exit::Exit;
        let codes: Vec<u8> = exit_codes().unwrap().into_iter().map(|(c, _)| c).collect();
        let all = [
            Exit::Healthy,
            Exit::Problem,
            Exit::Usage,
            Exit::Progressing,
            Exit::Unreachable,
            Exit::NotFound,
            Exit::Interrupted,
        ];
        assert_eq!(codes, all.map(Exit::code));
    }

    #[test]
    fn every_example_parses_as_the_command_line_it_shows() {
        let pages = [
            "mdiag", "trace", "triage", "gate", "snapshot", "explain", "mcp",
        ];
        assert_eq!(
            Cli::command()
                .get_subcommands()
                .map(|s| s.get_name())
                .filter(|n| *n != "help")
                .count(),
            pages.len() - 1,
            "a page of examples for every subcommand"
        );
        for page in pages {
            let examples = examples(page);
            assert!(examples.len() >= 3, "{page}");
            for (line, _) in examples {
                let mdiag_parts: Vec<&str> = line
                    .split(" | ")
                    .flat_map(|p| p.split(" && "))
                    .map(str::trim)
                    .filter(|p| p.starts_with("mdiag "))
                    .collect();
                assert!(!mdiag_parts.is_empty(), "{line}");
                for part in mdiag_parts {
                    let words = shlex::split(part).unwrap();
                    if let Err(e) = Cli::try_parse_from(&words) {
                        panic!("{part}: {e}");
                    }
                    // A subcommand's page shows that subcommand (or reads back its output).
                    if page != "mdiag" && page != "snapshot" {
                        assert_eq!(words[1], page, "{line}");
                    }
                }
            }
        }
    }

    #[test]
    fn generated_files_are_current() {
        let root = repo_root();
        let mut stale = Vec::new();
        for (path, bytes) in generated_files().unwrap() {
            if std::fs::read(root.join(&path)).ok().as_deref() != Some(bytes.as_slice()) {
                stale.push(path.display().to_string());
            }
        }
        assert!(
            stale.is_empty(),
            "stale generated files: {stale:?}; run `cargo xtask generate`"
        );
    }
}
