# What a file's metadata says it holds (src/meta.c): object files describe themselves in JSON,
# which may be spaced and ordered any way (docs/FORMAT.md, "R object files").

kind_of <- function(text) .Call(kompakt:::kpk_meta_kind_c, charToRaw(enc2utf8(text)))

test_that("R object metadata is read as JSON, whatever its spacing and member order", {
  written <- '{"kompakt":"r-serialize","version":1,"serialize":{"stream":0,"format":"binary","version":3}}'
  expect_identical(kind_of(written), list(kind = "r", stream = 0))
  expect_identical(kind_of(' {\n  "serialize" : { "version" : 3, "stream" : 2 } ,\r\n\t"version": 1,  "kompakt" : "r-serialize"\n}\n'),
                   list(kind = "r", stream = 2))
  expect_identical(kind_of('{"version":1,"kompakt":"r\\u002dserialize"}'), list(kind = "r", stream = 0))
  expect_identical(kind_of('{"kompakt":"r-serialize","version":1,"extra":[1,{"a":[true,null,"}"]},-2.5e3]}')$kind, "r")
  # Newer layouts ask for a newer kompakt; broken descriptions are damage.
  expect_identical(kind_of('{"kompakt":"r-serialize","version":2}')$kind, "r-newer")
  for (bad in c('{"kompakt":"r-serialize"}', '{"kompakt":"r-serialize","version":"1"}',
                '{"kompakt":"r-serialize","version":1.0}', '{"kompakt":"r-serialize","version":0}',
                '{"kompakt":"r-serialize","version":1,"serialize":[]}',
                '{"kompakt":"r-serialize","version":1,"serialize":{"stream":-1}}',
                '{"kompakt":"r-serialize","version":1,"serialize":{"stream":"0"}}')) {
    expect_identical(kind_of(bad)$kind, "r-damaged", info = bad)
  }
  # The last of a repeated member counts (as Python's json reads it).
  expect_identical(kind_of('{"kompakt":"python-pickle","kompakt":"r-serialize","version":1}')$kind, "r")
  expect_identical(kind_of('{"kompakt": "python-pickle", "version": 1}')$kind, "python")
})

test_that("text that only looks like R metadata is plain data", {
  for (text in c('', 'KTB', '"kompakt":"r-serialize","version":1,', '{"kompakt":"r-serialize","version":1',
                 '{"kompakt":"r-serialize","version":1} trailing', '{"note":"\\"kompakt\\":\\"r-serialize\\""}',
                 '{"kompakt":"R-serialize","version":1}', '{"kompakt":["r-serialize"],"version":1}',
                 '{"kompakt":"r-serialize","version":01}', '{"kompakt":"r-serialize",\n"version":1,}',
                 strrep('[', 5000), paste0('{"a":', strrep('[', 100), strrep(']', 100), '}'))) {
    expect_identical(kind_of(text)$kind, "plain", info = text)
  }
  expect_identical(.Call(kompakt:::kpk_meta_kind_c, as.raw(c(0x4b, 0x54, 0x42, 0x4c, 0, 1)))$kind, "table")
})

test_that("an R object file whose metadata is spaced JSON naming another stream reads back", {
  python <- Sys.getenv("KOMPAKT_PYTHON_BIN")
  if (!nzchar(python)) {
    if (nzchar(Sys.getenv("KOMPAKT_REQUIRE_SUGGESTS"))) stop("KOMPAKT_PYTHON_BIN is required")
    skip("KOMPAKT_PYTHON_BIN is not set")
  }
  dir <- withr::local_tempdir()
  value <- list(a = 1:3, b = "text")
  serialized <- file.path(dir, "value.rds")
  writeBin(serialize(value, NULL, xdr = FALSE), serialized)
  script <- file.path(dir, "write.py")
  writeLines(c(
    "import sys",
    "from kompakt import _core",
    "w = _core.FileWriter(sys.argv[2])",
    "w.write(w.add_stream(), b'not the object')",
    "w.write(w.add_stream(), open(sys.argv[1], 'rb').read())",
    "w.set_metadata(b'{ \"serialize\" : {\"stream\" : 1, \"format\": \"binary\"},\\n  \"version\" : 1, \"kompakt\" : \"r-serialize\" }')",
    "w.close()"), script)
  path <- file.path(dir, "spaced.kpk")
  out <- system2(python, c(shQuote(script), shQuote(serialized), shQuote(path)), stdout = TRUE, stderr = TRUE)
  expect_true(file.exists(path), info = paste(out, collapse = "\n"))
  expect_identical(kpk_read(path), value)
  expect_identical(kpk_read(path, trusted = FALSE), value)
})
