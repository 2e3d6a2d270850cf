module fleetsched/capi

go 1.26.0
