//! Prints each event type's count in a recording, like `jfr summary`, and decodes every event
//! (a check of the reader on real files): `cargo run --example summary -- FILE.jfr`.

use std::collections::BTreeMap;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = std::env::args().nth(1).ok_or("usage: summary FILE.jfr")?;
    let bytes = std::fs::read(&path)?;
    let mut counts: BTreeMap<String, u64> = BTreeMap::new();
    let mut values = Vec::new();
    let mut chunks = 0;
    for chunk in hprof_jfr::chunks(&bytes) {
        let chunk = chunk?;
        chunks += 1;
        for event in chunk.events() {
            let event = event?;
            chunk.read_event(&event, &mut values)?;
            *counts
                .entry(chunk.class(event.class).name.clone())
                .or_default() += 1;
        }
    }
    println!("chunks: {chunks}");
    for (name, n) in counts {
        println!("{name:50} {n}");
    }
    Ok(())
}
