fn main() {
    let bpe = if std::env::var("CL").is_ok() {
        tiktoken_rs::cl100k_base().unwrap()
    } else {
        tiktoken_rs::o200k_base().unwrap()
    };
    let text = std::fs::read_to_string(std::env::args().nth(1).unwrap()).unwrap();
    let mut total = 0;
    for line in text.split_inclusive('\n') {
        let toks = bpe.encode_with_special_tokens(line);
        total += toks.len();
        let pieces: Vec<String> = toks
            .iter()
            .map(|t| format!("{:?}", bpe.decode(&[*t]).unwrap()))
            .collect();
        println!("{:3} {}", toks.len(), pieces.join("|"));
    }
    println!("total {total}");
}
