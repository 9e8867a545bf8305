// the runtime suggests near names too (a tool filter's unknown tool): one implementation, kept there
export { closest, editDistance } from '../runtime/edit-distance.js'
