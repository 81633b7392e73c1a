library(testthat)
library(kompakt)
test_check("kompakt")
