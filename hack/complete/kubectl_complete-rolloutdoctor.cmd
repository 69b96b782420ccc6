@echo off
kubectl-rolloutdoctor.exe __complete %*
