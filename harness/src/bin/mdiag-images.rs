//! `mdiag-images push DIR`: builds the real node's images and pushes them to
//! the registries that `mdiag_harness::images::plan(DIR)` planned (read from
//! `DIR/plan.json`), then writes the references to `DIR/images.json` and
//! prints them. Run it in the registries' network namespace.
//!
//! `mdiag-images build DIR`: writes each image's manifest, config and layers
//! as files under DIR, for a look with other tools.

use std::path::PathBuf;

use clap::{Parser, Subcommand};
use mdiag_harness::images::{self, Images, RegistryPlan};

#[derive(Parser)]
#[command(about = "The real node's images and registries")]
struct Args {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Push to the planned registries and write DIR/images.json.
    Push { dir: PathBuf },
    /// Write the images' blobs under DIR.
    Build { dir: PathBuf },
}

fn main() -> anyhow::Result<()> {
    match Args::parse().cmd {
        Cmd::Push { dir } => {
            let plan = RegistryPlan::load(&dir)?;
            let imgs: Images = images::push_all(&plan)?;
            imgs.save(&dir)?;
            println!("{}", serde_json::to_string_pretty(&imgs)?);
        }
        Cmd::Build { dir } => {
            let built = images::build(&images::busybox_path())?;
            let mut all = vec![("pause".to_owned(), built.pause)];
            all.extend(
                built
                    .model_server
                    .into_iter()
                    .map(|(t, i)| (format!("model-server-{t}"), i)),
            );
            for (name, img) in all {
                let d = dir.join(&name);
                std::fs::create_dir_all(&d)?;
                std::fs::write(d.join("manifest.json"), &img.manifest.bytes)?;
                std::fs::write(d.join("config.json"), &img.config.bytes)?;
                for (i, l) in img.layers.iter().enumerate() {
                    std::fs::write(d.join(format!("layer{i}.tar.gz")), &l.blob.bytes)?;
                }
                println!(
                    "{name}: {} ({} layers)",
                    img.manifest.digest,
                    img.layers.len()
                );
            }
        }
    }
    Ok(())
}
