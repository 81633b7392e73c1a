# moto's S3 server, run by a Python that has moto and boto3, on the loopback address with one
# bucket: for the tests (test-remote.R) and bench/r_remote.R, which sources this file.

s3_server_script <- c(
  "import os, socket, sys, time",
  "import boto3",
  "from moto.server import ThreadedMotoServer",
  "ready, bucket = sys.argv[1], sys.argv[2]",
  "with socket.socket() as s:",
  "    s.bind(('127.0.0.1', 0))",
  "    port = s.getsockname()[1]",
  "server = ThreadedMotoServer(ip_address='127.0.0.1', port=port, verbose=False)",
  "server.start()",
  "endpoint = f'http://127.0.0.1:{port}'",
  "boto3.client('s3', endpoint_url=endpoint, aws_access_key_id='kompakt-test',",
  "             aws_secret_access_key='kompakt-test-secret', region_name='us-east-1').create_bucket(Bucket=bucket)",
  "with open(ready + '.tmp', 'w') as f:",
  "    f.write(endpoint)",
  "os.replace(ready + '.tmp', ready)",
  "# Serves until the ready file is removed (or half an hour has passed, should R die first).",
  "deadline = time.monotonic() + 1800",
  "while os.path.exists(ready) and time.monotonic() < deadline:",
  "    time.sleep(0.2)",
  "server.stop()"
)

# Starts the server with its files in `dir` (its log, server.log, counts the requests); returns
# the AWS settings that reach it (`env`) and `stop()`.
start_s3_server <- function(python, dir, bucket) {
  script <- file.path(dir, "server.py")
  writeLines(s3_server_script, script)
  ready <- file.path(dir, "ready")
  log <- file.path(dir, "server.log")
  system2(python, c(shQuote(script), shQuote(ready), bucket), wait = FALSE, stdout = log, stderr = log)
  deadline <- Sys.time() + 60
  while (!file.exists(ready)) {
    if (Sys.time() > deadline) stop("moto's S3 server did not start: ", paste(readLines(log), collapse = "\n"))
    Sys.sleep(0.1)
  }
  list(
    env = c(AWS_ACCESS_KEY_ID = "kompakt-test", AWS_SECRET_ACCESS_KEY = "kompakt-test-secret",
            AWS_REGION = "us-east-1", AWS_ENDPOINT_URL = readLines(ready, warn = FALSE)),
    log = log,
    stop = function() unlink(ready)
  )
}
