//! The trace importers never panic, whatever bytes they are given: random bytes,
//! and valid lines with random mutations (the inputs most likely to reach deep into
//! the parsers). Every error carries a line number within the input.

use memlens_cache::import::{DinOptions, DinReader, LackeyOptions, LackeyReader, OnError};

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

const SEEDS: [&[u8]; 10] = [
    b"I  0401ab70,3\n",
    b" S 1fff000688,8\n",
    b" L 00159970,8\n",
    b" M 0010915a,4\n",
    b"==123== Lackey\n",
    b"0 7fff0010\n",
    b"1 0x1000 8\n",
    b"2 400000 4\n",
    b"4 0\n",
    b"\n",
];

const ALPHABET: &[u8] = b"0123456789abcdefABCDEFxILSM ,\t\r\n=-#\xff\x00";

fn random_input(rng: &mut Rng) -> Vec<u8> {
    let mut input = Vec::new();
    for _ in 0..rng.below(40) {
        match rng.below(3) {
            0 => input.extend((0..rng.below(30)).map(|_| rng.next() as u8)),
            1 => input.extend((0..rng.below(30)).map(|_| ALPHABET[rng.below(ALPHABET.len())])),
            _ => {
                let mut line = SEEDS[rng.below(SEEDS.len())].to_vec();
                for _ in 0..rng.below(4) {
                    let at = rng.below(line.len() + 1);
                    match rng.below(3) {
                        0 if at < line.len() => {
                            line.remove(at);
                        }
                        1 => line.insert(at, ALPHABET[rng.below(ALPHABET.len())]),
                        _ => line.insert(at, b'f'),
                    }
                }
                input.extend(line);
            }
        }
    }
    if rng.below(20) == 0 {
        input.extend(std::iter::repeat_n(b'7', 5000 + rng.below(5000)));
    }
    input
}

#[test]
fn importers_never_panic_on_arbitrary_bytes() {
    let mut rng = Rng(0x5eed_1234_5678_9abc);
    let (mut references, mut errors) = (0, 0);
    for round in 0..4000 {
        let input = random_input(&mut rng);
        let lines = input.split(|&b| b == b'\n').count() as u64;
        let on_error = if round % 2 == 0 {
            OnError::Skip
        } else {
            OnError::Stop
        };
        let lackey = LackeyReader::new(
            &input[..],
            LackeyOptions {
                keep_instructions: round % 3 == 0,
                on_error,
            },
        );
        let din = DinReader::new(
            &input[..],
            DinOptions {
                keep_instructions: round % 3 == 0,
                default_size: (round % 5) as u16,
                on_error,
            },
        );
        let items: Vec<_> = lackey.chain(din).collect();
        for item in items {
            match item {
                Ok(reference) => {
                    assert!(reference.size >= 1);
                    references += 1;
                }
                Err(error) => {
                    assert!(
                        error.line >= 1 && error.line <= lines,
                        "{error} of {lines} lines"
                    );
                    assert!(!error.to_string().is_empty());
                    errors += 1;
                }
            }
        }
    }
    eprintln!("fuzzed 4000 inputs: {references} references and {errors} errors, no panic");
    assert!(
        references > 100 && errors > 100,
        "the inputs exercise both paths"
    );
}
