# tries: a 10 MB program
# expect: static_rejected
# generate: 10mb
# message: limit
