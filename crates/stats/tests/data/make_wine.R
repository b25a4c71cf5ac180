# The `wine` data of R's ordinal package (Randall 1989: bitterness of wine, 72 ratings on 1-5
# by 9 judges of 8 bottles at two temperatures and two contacts) and the figures R gives for
# it: clm(rating ~ temp + contact) and clmm(rating ~ temp + contact + (1|judge) + (1|bottle)),
# both logit. Run: Rscript make_wine.R   (writes wine.csv and wine_expected.json here)
suppressPackageStartupMessages(library(ordinal))
d <- ordinal::wine
out <- data.frame(rating = as.integer(d$rating), warm = as.integer(d$temp == "warm"),
                  yes = as.integer(d$contact == "yes"), judge = as.integer(d$judge),
                  bottle = as.integer(d$bottle))
write.csv(out, "wine.csv", row.names = FALSE)
f <- clm(rating ~ temp + contact, data = d, link = "logit")
m <- clmm(rating ~ temp + contact + (1 | judge) + (1 | bottle), data = d, link = "logit")
num <- function(x) paste(sprintf("%.12g", x), collapse = ", ")
json <- paste0('{\n  "clm": {"thresholds": [', num(f$alpha), '], "coefficients": [', num(f$beta),
  '], "standard_errors": [', num(sqrt(diag(vcov(f)))[names(f$beta)]), '], "log_likelihood": ', num(f$logLik), '},\n',
  '  "clmm": {"thresholds": [', num(m$alpha), '], "coefficients": [', num(m$beta),
  '], "sd": [', num(attr(VarCorr(m)$judge, "stddev")), ', ', num(attr(VarCorr(m)$bottle, "stddev")),
  '], "log_likelihood": ', num(m$logLik), '}\n}\n')
writeLines(json, "wine_expected.json", sep = "")
