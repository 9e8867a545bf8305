#!/usr/bin/env node
// The same `tutti` as bin/run.cjs (package.json's bin), for whatever names
// this file: one dispatcher, in bin/run.cjs.
import './run.cjs'
