#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| warden_fuzz::checks::deepcode_config(data));
