# tries: an empty program
# expect: generation_failure
# generate: empty
