//! Writes each target's seed corpus into `DIR/<target>/` (`scripts/fuzz.sh`
//! runs it before fuzzing): `seeds DIR`.

use std::path::PathBuf;

fn main() -> std::io::Result<()> {
    let Some(dir) = std::env::args_os().nth(1).map(PathBuf::from) else {
        eprintln!("usage: seeds DIR");
        std::process::exit(2);
    };
    for (name, _) in hyperdb_api_fuzz::TARGETS {
        let target = dir.join(name);
        std::fs::create_dir_all(&target)?;
        for (i, seed) in hyperdb_api_fuzz::seeds::seeds(name).iter().enumerate() {
            std::fs::write(target.join(format!("seed-{i}")), seed)?;
        }
    }
    Ok(())
}
