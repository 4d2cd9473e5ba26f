# tries: binary bytes instead of source
# expect: static_rejected
# generate: binary
# message: NUL bytes
